/**
 * Operator commands: `npm run admin -- <command>`. With TABLE_NAME set it works on that table
 * (AWS credentials and region from the environment, DYNAMODB_ENDPOINT to override the endpoint);
 * otherwise on the local twin's data in DATA_DIR (.data/): the running twin's (in memory or not, as
 * it recorded itself in DATA_DIR/twin.json), or on its own when none runs.
 */
import { randomUUID } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { userInfo } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { listUnsignedTokens } from '#tools/unsigned-tokens.ts';
import { type AuditRequest, auditScopeFor, type ChainId } from '#functions/core/audit/audit-record.ts';
import { withAuditScope } from '#functions/core/audit/audit-scope.ts';
import { verifyChain } from '#functions/core/audit/audit-trail.ts';
import { rotateTokenKeyring, tokenKeyStore } from '#functions/core/auth/token-keys.ts';
import { syncTokenKeysToKeyValueStore, writeTokenKeyringToKeyValueStore } from '#functions/core/auth/token-keys-kvs.ts';
import { listClients } from '#functions/core/clients/client-repository.ts';
import { db } from '#functions/core/store/dynamo.ts';
import { createClient, endPreviousClientToken, rotateClientToken } from '#functions/core/clients/clients.ts';
import { previousTokenGrace, tokenUseView } from '#functions/core/auth/token-rotation.ts';
import rotateTokenSchema from '#functions/core/api/validators/rotate-token.cjs';
import { keyringStore, newSigningKey, publishedKeys, rotateKeyring } from '#functions/core/sso/signing-keys.ts';
import type { CreateRolloutBody } from '#functions/core/api/validators/create-rollout.cjs';
import rolloutSchema from '#functions/core/api/validators/create-rollout.cjs';
import { schemaErrors } from '#functions/core/api/validation.ts';
import { getRollout, type RolloutView, startRollout } from '#functions/core/rollouts/rollouts.ts';
import { ensureTable } from '#local/create-table.ts';
import { awaitTransactionCommits, type DynamoDbLocal, JavaMissingError, startDynamoDbLocal } from '#local/dynamodb-local.ts';
import { ensureTokenKeys } from '#local/token-keys.ts';
import { localEnvironment, localTableName, type TwinRuntime } from '#local/environment.ts';

const usage = `Usage: npm run admin -- <command> [--json]

  client create --name <name>     create a client (integrator) and print its token, shown only once
  client list                     list the clients, with when each one's token was last used
  client rotate-token --id <id> [--previous-valid-for <seconds>]
                                  give a client a new token and print it; the old one keeps working for
                                  <seconds> (default ${previousTokenGrace.defaultSeconds}, a day; at most ${previousTokenGrace.maxSeconds}; 0 ends
                                  it at once)
  client end-previous-token --id <id>
                                  end at once the token the last rotation kept working
  keys rotate                     new signing key for login tokens; the old ones keep verifying for an hour
  keys list                       the signing keys (ids and dates, never the private parts)
  token-keys rotate               new token key k<n+1>, which signs new tokens; the old ones keep verifying
                                  (with TOKEN_KEYS_KVS_ARN, written to the edge's KeyValueStore first; on a
                                  deployed stage without an edge, --without-edge)
  token-keys sync                 write every token key to the edge's KeyValueStore (TOKEN_KEYS_KVS_ARN):
                                  after a rotation made without it, or to repair the store
  token-keys list                 the token key ids, and which one signs (never the keys)
  tokens unsigned                 the tokens issued before tokens were signed: whose owners must rotate
                                  them before UNSIGNED_TOKENS=refuse (kind and owner ids)
  rollout start --client <id> --template <id> [--tenants all|<id,id,…>] [--version <n>] [--wave-size <n>]
                [--pause <seconds>] [--failure-budget <n>] [--reload] [--dry-run]
                                  roll a template version out to its tenants in waves (docs/rollouts.md), as
                                  POST /tenants/templates/{id}/rollouts does; --dry-run prints what each would get
  rollout watch --client <id> --template <id> --id <rollout id>
                                  follow a rollout: a line whenever it moves on, until it finishes, is
                                  cancelled or pauses
  audit verify --tenant <id> [--agent <id>] | --client <id>
                                  check a tenant's, one of its agents' (its run reports) or a client's audit
                                  chain from its oldest record kept to its head; names the first broken link
                                  (exit 1) if any

  The commands that change something (client create, rotate-token, end-previous-token, rollout start)
  write an audit record in the change's transaction, naming the operator: --operator <name>, else the
  system user.

Target: the table named by TABLE_NAME (with AWS credentials; DYNAMODB_ENDPOINT overrides the
endpoint), the keyring secret named by SIGNING_KEYS_SECRET_ARN, the token keyring secret named
by TOKEN_KEYS_SECRET_ARN and the rollout queue named by ROLLOUT_QUEUE_URL (the stack's outputs), else
the local twin's: the running one (started with npm start, in memory or not, on DATA_DIR), or its data
in DATA_DIR (default .data/) when none runs (a rollout needs the running twin: it runs on its queues).`;

const dataDir = process.env.DATA_DIR || '.data';

class UsageError extends Error {}

/** How often `rollout watch` reads the rollout. */
const watchIntervalMs = 1_000;

const { positionals, values } = parseArgs({
  allowPositionals: true,
  options: {
    name: { type: 'string' },
    id: { type: 'string' },
    client: { type: 'string' },
    template: { type: 'string' },
    tenants: { type: 'string', default: 'all' },
    version: { type: 'string' },
    'wave-size': { type: 'string' },
    pause: { type: 'string' },
    'failure-budget': { type: 'string' },
    reload: { type: 'boolean', default: false },
    'dry-run': { type: 'boolean', default: false },
    json: { type: 'boolean', default: false },
    'without-edge': { type: 'boolean', default: false },
    'previous-valid-for': { type: 'string' },
    tenant: { type: 'string' },
    agent: { type: 'string' },
    operator: { type: 'string' },
    help: { type: 'boolean' },
  },
});

/** The twin running on DATA_DIR, as it recorded itself (in memory or not), if it still runs. */
function runningTwin(): TwinRuntime | undefined {
  const runtimeFile = join(dataDir, 'twin.json');
  if (!existsSync(runtimeFile)) return undefined;
  const running = JSON.parse(readFileSync(runtimeFile, 'utf8')) as TwinRuntime;
  return isAlive(running.pid) ? running : undefined;
}

/**
 * Refuses to work on DATA_DIR on its own while a twin that does not use it answers on PORT: what
 * the CLI wrote would not be what that twin reads (a twin started with another DATA_DIR).
 */
async function refuseOtherTwin(): Promise<void> {
  const url = `http://localhost:${process.env.PORT || 3000}`;
  const answers = await fetch(`${url}/health`, { signal: AbortSignal.timeout(1_000) }).then(
    (response) => response.ok,
    () => false,
  );
  if (answers) {
    throw new Error(
      `A twin is running at ${url}, but not on DATA_DIR=${dataDir}: what this command wrote would not be what it reads. ` +
        'Run the command with the DATA_DIR that twin was started with.',
    );
  }
}

/** Points the core modules at the local twin's data: the running twin's (either mode), or a DynamoDB Local started here. */
async function useLocalData(): Promise<DynamoDbLocal | undefined> {
  const running = runningTwin();
  if (running) {
    Object.assign(process.env, localEnvironment(running.dynamodbEndpoint));
    // The running twin's DynamoDB Local answers a transaction before it commits it: a kill -9 of the
    // twin right after this command must not lose what it reported written (process.exit closes the barrier).
    // In memory there is no file to wait for, as in the twin itself (local/twin.ts).
    if (!running.inMemory) awaitTransactionCommits(db(), running.dynamodbEndpoint);
    return undefined;
  }
  await refuseOtherTwin();
  const dynamo = await startDynamoDbLocal({ dataDir: join(dataDir, 'dynamodb') });
  Object.assign(process.env, localEnvironment(dynamo.endpoint));
  const client = new DynamoDBClient({ endpoint: dynamo.endpoint });
  await ensureTable(client, localTableName);
  client.destroy();
  return dynamo;
}

/**
 * Points the token keyring at the twin's: the running one's (in memory it lives in a scratch
 * folder), else the data folder's, which the twin reads when it starts on it.
 */
function useLocalTokenKeys(running: TwinRuntime | undefined): void {
  process.env.TOKEN_KEYS_FILE ??= running?.tokenKeysFile ?? join(dataDir, 'token-keys.json');
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

function positiveId(raw: string | undefined, option = 'id'): number {
  if (!raw || !/^[1-9][0-9]{0,15}$/.test(raw)) throw new UsageError(`--${option} must be a positive integer`);
  return Number(raw);
}

/** A whole-number option, when given (0 allowed where `min` is 0); the API's schema checks its range. */
function wholeNumber(option: keyof typeof values, min = 1): number | undefined {
  const raw = values[option];
  if (raw === undefined) return undefined;
  if (typeof raw !== 'string' || !/^[0-9]{1,9}$/.test(raw) || Number(raw) < min) {
    throw new UsageError(`--${option} must be a whole number of at least ${min}`);
  }
  return Number(raw);
}

/** `--previous-valid-for`, checked as the API checks `previousValidForSeconds`; undefined when not given (a day). */
function previousValidFor(): number | undefined {
  const seconds = wholeNumber('previous-valid-for', 0);
  const [first] = seconds === undefined ? [] : schemaErrors(rotateTokenSchema, { previousValidForSeconds: seconds });
  if (first) throw new UsageError(`--previous-valid-for ${first.message}`);
  return seconds;
}

/** The body a rollout start sends, from the options, checked as the API checks it. */
function rolloutRequest(): CreateRolloutBody {
  const tenants =
    values.tenants === 'all' ? ('all' as const) : (values.tenants ?? '').split(',').map((id) => positiveId(id.trim(), 'tenants'));
  const request = {
    tenants,
    version: wholeNumber('version'),
    waveSize: wholeNumber('wave-size'),
    pauseSeconds: wholeNumber('pause', 0),
    failureBudget: wholeNumber('failure-budget'),
    reload: values.reload,
    dryRun: values['dry-run'],
  };
  const body = Object.fromEntries(Object.entries(request).filter(([, value]) => value !== undefined));
  const [first] = schemaErrors(rolloutSchema, body);
  if (first) throw new UsageError(`The rollout is not valid: ${first.pointer} ${first.message}`);
  return body as unknown as CreateRolloutBody;
}

/** One line on a rollout: its state, wave and counts. */
function rolloutLine(rollout: RolloutView): string {
  const { counts } = rollout;
  const wave = rollout.currentWave === null ? '' : ` wave ${rollout.currentWave}/${rollout.waves.length}`;
  const reason = rollout.pauseReason ? ` (${rollout.pauseReason})` : '';
  return (
    `rollout ${rollout.id} v${rollout.version} ${rollout.state}${reason}${wave}: ${counts.applied} applied, ` +
    `${counts.unchanged} unchanged, ${counts.pending_activation} waiting for activation, ${counts.failed} failed, ` +
    `${counts.pending} pending`
  );
}

/**
 * Runs a command that changes something owing its audit record (functions/core/audit/): the operator
 * (--operator, else the system user), the command, and the names of the options given, never their values.
 */
function asOperator<T>(chain: AuditRequest['chain'], resource: AuditRequest['resource'], work: () => Promise<T>): Promise<T> {
  const given = Object.keys(values).filter((name) => !['json', 'help', 'operator', 'tenants'].includes(name));
  const request: AuditRequest = {
    chain,
    actor: { kind: 'operator', name: values.operator?.trim() || userInfo().username },
    action: `admin ${positionals.join(' ')}`,
    resource,
    fields: given.filter((name) => values[name as keyof typeof values] !== false).sort(),
    requestId: randomUUID(),
  };
  return withAuditScope(auditScopeFor(request), work);
}

const clientChain = (clientId: number) => ({ owner: 'client', ownerId: clientId, clientId }) as const;

async function run(print: (text: string, data: unknown) => void): Promise<number> {
  const command = positionals.join(' ');
  switch (command) {
    case 'client create': {
      const name = values.name?.trim();
      if (!name) throw new UsageError('client create needs --name <name>');
      const created = (allocated: (counter: string) => number | undefined) => clientChain(allocated('client') ?? 0);
      const { client, token } = await asOperator(created, { type: 'client' }, () => createClient(name));
      print(`Client ${client.clientId} (${client.nome}) created.\nToken, shown only once: ${token}`, {
        id: client.clientId,
        nome: client.nome,
        token,
      });
      return 0;
    }
    case 'client list': {
      const clients = (await listClients()).map((client) => ({
        id: client.clientId,
        nome: client.nome,
        createdAt: client.createdAt,
        ...tokenUseView(client),
      }));
      const lines = clients.map(
        (client) =>
          `${String(client.id).padStart(6)}  ${client.createdAt}  ${(client.currentToken.lastUsedAt ?? 'never').padEnd(24)}  ` +
          client.nome +
          (client.previousToken
            ? `  (previous token works until ${client.previousToken.expiresAt}, last used ${client.previousToken.lastUsedAt ?? 'never'})`
            : ''),
      );
      print(['    id  created                   token last used           name', ...lines].join('\n'), clients);
      return 0;
    }
    case 'client rotate-token': {
      const id = positiveId(values.id);
      const rotated = await asOperator(clientChain(id), { type: 'client', id: String(id) }, () =>
        rotateClientToken(id, { previousValidForSeconds: previousValidFor() }),
      );
      if (!rotated) {
        console.error(`Client ${id} not found`);
        return 1;
      }
      const previous = rotated.previousExpiresAt
        ? `the old one keeps working until ${rotated.previousExpiresAt} (end it sooner: client end-previous-token --id ${id})`
        : 'the old one no longer works';
      print(`Client ${id} has a new token; ${previous}.\nToken, shown only once: ${rotated.token}`, rotated);
      return 0;
    }
    case 'client end-previous-token': {
      const id = positiveId(values.id);
      const outcome = await asOperator(clientChain(id), { type: 'client', id: String(id) }, () => endPreviousClientToken(id));
      if (!outcome) {
        console.error(`Client ${id} not found`);
        return 1;
      }
      print(
        outcome.ended
          ? `Client ${id}: its previous token no longer works.`
          : `Client ${id} had no previous token still working: nothing to end.`,
        { id, ...outcome },
      );
      return 0;
    }
    case 'keys rotate': {
      const store = keyringStore();
      const key = await newSigningKey();
      const keyring = rotateKeyring(await store.read(), key);
      await store.write(keyring);
      print(
        `New signing key ${key.kid} is active; ${keyring.keys.length - 1} older key(s) keep verifying tokens until they expire.\n` +
          'Functions pick it up within 5 minutes.',
        { kid: key.kid, keys: keyring.keys.length },
      );
      return 0;
    }
    case 'keys list': {
      const keys = publishedKeys(await keyringStore().read()).map(({ kid, createdAt, retiredAt }) => ({
        kid,
        createdAt,
        retiredAt: retiredAt ?? null,
      }));
      const lines = keys.map(
        (key) => `${key.kid}  created ${key.createdAt}  ${key.retiredAt ? `retired ${key.retiredAt}` : 'active'}`,
      );
      print(lines.length > 0 ? lines.join('\n') : 'No signing key yet: run keys rotate', keys);
      return 0;
    }
    case 'token-keys rotate': {
      // On AWS the edge must learn a key before any function mints with it, or it refuses every new token.
      if (process.env.TOKEN_KEYS_SECRET_ARN && !process.env.TOKEN_KEYS_KVS_ARN && !values['without-edge'])
        throw new UsageError(
          "token-keys rotate on a deployed stack needs TOKEN_KEYS_KVS_ARN (the edge stack's TokenKeysKeyValueStoreArn output), " +
            'or --without-edge for a stage that has no edge',
        );
      const store = tokenKeyStore();
      const { keyring, keyId } = rotateTokenKeyring(await store.read());
      const kvsArn = process.env.TOKEN_KEYS_KVS_ARN;
      // The edge first: it must know a key before any function mints with it.
      if (kvsArn) await writeTokenKeyringToKeyValueStore(kvsArn, keyring);
      await store.write(keyring);
      const ids = Object.keys(keyring.keys);
      print(
        `Token key ${keyId} signs new tokens; ${ids.length - 1} older key(s) keep verifying the tokens they signed.\n` +
          'Functions pick it up within 5 minutes.' +
          (kvsArn ? ' The edge KeyValueStore has it.' : ''),
        { keyId, keys: ids, keyValueStore: Boolean(kvsArn) },
      );
      return 0;
    }
    case 'token-keys sync': {
      const kvsArn = process.env.TOKEN_KEYS_KVS_ARN;
      if (!kvsArn)
        throw new UsageError("token-keys sync needs TOKEN_KEYS_KVS_ARN (the edge stack's TokenKeysKeyValueStoreArn output)");
      const { put } = await syncTokenKeysToKeyValueStore(kvsArn);
      print(
        put.length === 0
          ? 'The edge KeyValueStore already has every token key.'
          : `The edge KeyValueStore now has every token key (written: ${put.join(', ')}).`,
        { put },
      );
      return 0;
    }
    case 'token-keys list': {
      const keyring = await tokenKeyStore().read();
      const keys = Object.keys(keyring.keys)
        .sort((a, b) => Number(a) - Number(b))
        .map((id) => ({ id, current: id === keyring.current }));
      const lines = keys.map((key) => `k${key.id}${key.current ? '  current (signs new tokens)' : ''}`);
      print(lines.length > 0 ? lines.join('\n') : 'No token key yet: run token-keys rotate', keys);
      return 0;
    }
    case 'tokens unsigned': {
      const tokens = (await listUnsignedTokens()).map((token) => ({
        kind: token.kind,
        clientId: token.clientId,
        tenantId: 'tenantId' in token ? token.tenantId : null,
        agentId: 'agentId' in token ? token.agentId : null,
        createdAt: token.createdAt ?? null,
        // A previous token (kept by a rotation): it stops by itself then, or when its owner ends it.
        expiresAt: token.expiresAt === undefined ? null : new Date(token.expiresAt * 1000).toISOString(),
      }));
      const lines = tokens.map(
        (token) =>
          `${token.kind.padEnd(6)}  client ${token.clientId}` +
          (token.tenantId === null ? '' : `  tenant ${token.tenantId}`) +
          (token.agentId === null ? '' : `  agent ${token.agentId}`) +
          (token.expiresAt === null ? '' : `  (previous token, works until ${token.expiresAt})`),
      );
      print(
        tokens.length > 0
          ? `${tokens.length} unsigned token(s); each must be rotated before UNSIGNED_TOKENS=refuse:\n${lines.join('\n')}`
          : 'No unsigned token: UNSIGNED_TOKENS=refuse turns nobody away.',
        tokens,
      );
      return 0;
    }
    case 'rollout start': {
      const clientId = positiveId(values.client, 'client');
      const templateId = positiveId(values.template, 'template');
      const body = rolloutRequest();
      const started = await asOperator(clientChain(clientId), { type: 'rollout' }, () =>
        startRollout(clientId, templateId, body, Date.now() + 60_000),
      );
      if ('dryRun' in started) {
        const { dryRun } = started;
        const lines = dryRun.tenants.map(
          (tenant) =>
            `tenant ${tenant.tenantId} (${tenant.nome}): v${tenant.fromVersion ?? '-'} -> v${tenant.toVersion} ${tenant.outcome}` +
            `; tables created ${tenant.tables.created.length}, rebuilt ${tenant.tables.rebuilt.length}` +
            (tenant.error ? `; ${tenant.error.code}: ${tenant.error.message}` : ''),
        );
        const more = dryRun.truncated ? `\n(the first ${dryRun.tenants.length} of ${dryRun.total})` : '';
        print(
          `Dry run: ${dryRun.total} tenant(s) in ${dryRun.waves} wave(s) of ${dryRun.waveSize}\n${lines.join('\n')}${more}`,
          dryRun,
        );
      } else {
        print(
          `${rolloutLine(started.rollout)}\nFollow it: npm run admin -- rollout watch --client ${clientId} --template ${templateId} --id ${started.rollout.id}`,
          started.rollout,
        );
      }
      return 0;
    }
    case 'rollout watch': {
      const clientId = positiveId(values.client, 'client');
      const templateId = positiveId(values.template, 'template');
      const rolloutId = positiveId(values.id);
      let last = '';
      for (;;) {
        const rollout = await getRollout(clientId, templateId, rolloutId);
        const line = rolloutLine(rollout);
        if (line !== last) print(line, rollout);
        last = line;
        if (rollout.state !== 'running') return rollout.state === 'finished' ? 0 : 1;
        await new Promise((resolve) => setTimeout(resolve, watchIntervalMs));
      }
    }
    case 'audit verify': {
      if ((values.tenant === undefined) === (values.client === undefined)) {
        throw new UsageError('audit verify needs --tenant <id> or --client <id>');
      }
      if (values.agent !== undefined && values.tenant === undefined) {
        throw new UsageError('audit verify --agent <id> needs --tenant <id>: an agent is one of a tenant');
      }
      const chain: ChainId =
        values.tenant === undefined
          ? { owner: 'client', ownerId: positiveId(values.client, 'client') }
          : values.agent === undefined
            ? { owner: 'tenant', ownerId: positiveId(values.tenant, 'tenant') }
            : { owner: 'agent', ownerId: positiveId(values.agent, 'agent'), tenantId: positiveId(values.tenant, 'tenant') };
      const verdict = await verifyChain(chain);
      const kept =
        verdict.firstSeq === undefined
          ? 'no record'
          : `${verdict.records} record(s), seq ${verdict.firstSeq} to ${verdict.firstSeq + verdict.records - 1}` +
            (verdict.firstSeq > 1
              ? ` (the older ones expired; seq ${verdict.firstSeq}'s prevHash ${verdict.trustedPrevHash} taken on trust)`
              : '');
      print(
        verdict.broken
          ? `Audit chain ${verdict.chain}: broken at seq ${verdict.broken.seq}: ${verdict.broken.reason} (${kept} read).`
          : `Audit chain ${verdict.chain}: ${kept}, every link holds; the head is seq ${verdict.headSeq}.`,
        verdict,
      );
      return verdict.broken ? 1 : 0;
    }
    default:
      throw new UsageError(command ? `Unknown command: ${command}` : 'No command given');
  }
}

if (values.help) {
  console.log(usage);
  process.exit(0);
}
process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';
let localDynamo: DynamoDbLocal | undefined;
let exitCode: number;
/** The commands that make a token, and so need the token keys. */
const mintsTokens = positionals[0] === 'client' && (positionals[1] === 'create' || positionals[1] === 'rotate-token');

try {
  if (positionals[0] === 'keys') {
    // The keyring is not in the table: a secret on AWS, a file of the twin's data otherwise.
    if (process.env.TABLE_NAME && !process.env.SIGNING_KEYS_SECRET_ARN) {
      throw new UsageError('keys commands on a deployed stack need SIGNING_KEYS_SECRET_ARN (the SigningKeysSecretArn output)');
    }
    if (!process.env.SIGNING_KEYS_SECRET_ARN) {
      // The running twin's keyring (an in-memory twin keeps it in a scratch folder), else the data folder's.
      const running = runningTwin();
      if (!running) await refuseOtherTwin();
      process.env.SIGNING_KEYS_FILE ??= running?.signingKeysFile ?? join(dataDir, 'jwt-keys.json');
    }
  } else if (positionals[0] === 'token-keys') {
    // The token keyring is not in the table either.
    if (process.env.TABLE_NAME && !process.env.TOKEN_KEYS_SECRET_ARN) {
      throw new UsageError('token-keys commands on a deployed stack need TOKEN_KEYS_SECRET_ARN (the TokenKeysSecretArn output)');
    }
    if (!process.env.TOKEN_KEYS_SECRET_ARN) {
      const running = runningTwin();
      if (!running) await refuseOtherTwin();
      useLocalTokenKeys(running);
    }
  } else if (positionals[0] === 'rollout' && positionals[1] === 'start' && !values['dry-run']) {
    // A rollout runs on the rollout queue: the running twin's, or the stack's.
    if (process.env.TABLE_NAME && !process.env.ROLLOUT_QUEUE_URL) {
      throw new UsageError('rollout start on a deployed stack needs ROLLOUT_QUEUE_URL (the RolloutQueueUrl output)');
    }
    if (!process.env.TABLE_NAME) {
      const running = runningTwin();
      if (!running) throw new Error("A rollout runs on the twin's queues: start the twin (npm start) first");
      Object.assign(process.env, { SQS_ENDPOINT: running.queueEndpoint, ROLLOUT_QUEUE_URL: running.rolloutQueueUrl });
      localDynamo = await useLocalData();
    }
  } else if (!process.env.TABLE_NAME) {
    localDynamo = await useLocalData();
    // Commands that mint tokens use the twin's token keys, made here as the twin would if it never ran.
    useLocalTokenKeys(runningTwin());
    if (mintsTokens) await ensureTokenKeys();
  } else if (
    mintsTokens &&
    !process.env.TOKEN_KEYS_SECRET_ARN &&
    !(process.env.DYNAMODB_ENDPOINT && process.env.TOKEN_KEYS_FILE)
  ) {
    // A deployed table takes only tokens its stack's keys signed (a local file is for a local DynamoDB).
    throw new UsageError('client commands on a deployed stack need TOKEN_KEYS_SECRET_ARN (the TokenKeysSecretArn output)');
  }
  exitCode = await run((text, data) => console.log(values.json ? JSON.stringify(data) : text));
} catch (error) {
  if (error instanceof UsageError) {
    console.error(`${error.message}\n\n${usage}`);
    exitCode = 2;
  } else if (error instanceof JavaMissingError) {
    console.error(error.message);
    exitCode = 1;
  } else {
    console.error(error instanceof Error ? error.message : String(error));
    exitCode = 1;
  }
} finally {
  await localDynamo?.stop();
}
process.exit(exitCode);
