import { randomBytes } from 'node:crypto';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { SQSClient } from '@aws-sdk/client-sqs';
import { migrateStoredData } from '#functions/core/migrations/stored-data.ts';
import { db } from '#functions/core/store/dynamo.ts';
import { deadLetterUrlVariable, type QueueName, queueUrlVariable } from '#functions/core/store/queue-definitions.ts';
import { AUTHORIZER_CACHE_SECONDS, ORIGIN_HEADER } from '#functions/core/edge/origin-secret.ts';
import { behindEdgeVariable } from '#functions/core/edge/viewer-address.ts';
import { unsignedTokensAccepted } from '#functions/core/auth/tokens.ts';
import { ensureSigningKey } from '#functions/core/sso/signing-keys.ts';
import { anonymousPathsOf } from '#functions/edge/viewer-request-code.ts';
import { queueConsumers, routes, timedFunctions } from '#functions/routes.ts';
import { startClock } from './clock.ts';
import { ensureTable } from './create-table.ts';
import { localEnvironment, localTableName } from './environment.ts';
import { shareDynamoInTurns } from './dynamo-turns.ts';
import { awaitTransactionCommits, type DynamoDbLocalLoad, startDynamoDbLocal } from './dynamodb-local.ts';
import { startGateway } from './gateway.ts';
import { startEdge } from './edge.ts';
import { keyValueStoreOfKeyringFile, loadViewerRequest } from './edge-function.ts';
import { ensureTokenKeys } from './token-keys.ts';
import { ensureLocalClient } from './local-client.ts';
import { freePort } from './ports.ts';
import { type Poller, startPoller } from './queue-poller.ts';
import { localPayloadBucket, startLocalQueues } from './queues.ts';

export interface TwinOptions {
  /** 0 picks a free port. */
  port: number;
  /** Where data is kept; undefined keeps everything in memory. */
  dataDir?: string;
  /** Use exactly this client token (LOCAL_CLIENT_TOKEN). */
  clientToken?: string;
  /** Host name under which tenant domains are minted. */
  tenantBaseDomain?: string;
  /** Print one line per request and per worker batch. */
  log?: boolean;
  /** Overrides the queues' visibility timeout (tests use a short one to see redeliveries). */
  queueVisibilityTimeoutSeconds?: number;
  /** Run the timed functions (the schedule dispatcher) on the wall clock; default true. */
  clock?: boolean;
  /** Overrides the webhook retry delays in seconds (tests: a fast schedule instead of hours). */
  webhookRetryDelaysSeconds?: readonly number[];
  /** Overrides a paused webhook endpoint's first and longest pause in seconds (tests: seconds instead of minutes). */
  webhookBreakerCooldownSeconds?: { first: number; longest: number };
  /** The queues whose consumers run (default: all); the bench measures one path at a time. */
  consumers?: readonly QueueName[];
  /**
   * Put the edge in front, as a stage with the edge on has it (local/edge.ts): the viewer function
   * refuses forged tokens at `url`, and the gateway, at `originUrl`, refuses what did not come through it.
   */
  edge?: boolean;
  /** How many requests its DynamoDB Local will serve (local/dynamodb-local.ts): default `light`. */
  load?: DynamoDbLocalLoad;
}

export interface Twin {
  /** Where callers go: the edge when it is on, else the gateway. */
  url: string;
  /** The gateway (API Gateway's stand-in), behind the edge when it is on. */
  originUrl: string;
  clientId: number;
  clientToken: string;
  dynamodbEndpoint: string;
  tableName: string;
  sqsEndpoint: string;
  queueUrls: Record<QueueName, string>;
  deadLetterQueueUrls: Record<QueueName, string>;
  /** Every variable the twin set for its functions (tests give their own process the same). */
  environment: Record<string, string>;
  stop(): Promise<void>;
}

/** Set by the first startTwin of this process. */
let twinStarted = false;

/**
 * Starts the whole service on this machine: DynamoDB Local and the table, fauxqs and the queues,
 * the local client, the gateway, a poller per queue consumer and a clock per timed function. Queue messages are kept in
 * memory only (fauxqs), also when the table is persisted. Once per process: the functions read their
 * configuration and create their AWS clients once, as on Lambda, so a second twin's handlers would
 * still talk to the first one's emulators.
 */
export async function startTwin(options: TwinOptions): Promise<Twin> {
  if (twinStarted) throw new Error('A twin was already started in this process: start another one in a process of its own.');
  twinStarted = true;
  if (options.dataDir) mkdirSync(options.dataDir, { recursive: true });
  process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED = 'true';
  const stops: Array<() => Promise<void>> = [];
  const stopAll = async () => {
    for (const stop of stops.reverse()) await stop();
  };
  try {
    const dynamo = await startDynamoDbLocal({
      dataDir: options.dataDir && join(options.dataDir, 'dynamodb'),
      load: options.load,
    });
    stops.push(() => dynamo.stop());
    const queues = await startLocalQueues({ visibilityTimeoutSeconds: options.queueVisibilityTimeoutSeconds });
    stops.push(() => queues.stop());
    // In memory, the signing and token keys live in a scratch folder that goes with the twin.
    const keysDir = options.dataDir ?? mkdtempSync(join(tmpdir(), 'twin-keys-'));
    if (!options.dataDir) stops.push(async () => rmSync(keysDir, { recursive: true, force: true }));
    const port = options.port === 0 ? await freePort() : options.port;
    const tenantBaseDomain = options.tenantBaseDomain ?? 'localhost';
    const environment: Record<string, string> = {
      ...localEnvironment(dynamo.endpoint, tenantBaseDomain),
      SQS_ENDPOINT: queues.endpoint,
      ...Object.fromEntries(Object.entries(queues.urls).map(([name, url]) => [queueUrlVariable(name as QueueName), url])),
      ...Object.fromEntries(
        Object.entries(queues.deadLetterUrls).map(([name, url]) => [deadLetterUrlVariable(name as QueueName), url]),
      ),
      S3_ENDPOINT: queues.endpoint,
      PAYLOAD_BUCKET: localPayloadBucket,
      // Receivers on this machine (the example receiver) are reachable, over http too. Never on AWS.
      WEBHOOK_ALLOW_LOOPBACK: 'true',
      ...(options.webhookRetryDelaysSeconds ? { WEBHOOK_RETRY_DELAYS: options.webhookRetryDelaysSeconds.join(',') } : {}),
      ...(options.webhookBreakerCooldownSeconds
        ? {
            WEBHOOK_BREAKER_COOLDOWN: `${options.webhookBreakerCooldownSeconds.first},${options.webhookBreakerCooldownSeconds.longest}`,
          }
        : {}),
      SIGNING_KEYS_FILE: join(keysDir, 'jwt-keys.json'),
      // The HMAC keys of bearer tokens (functions/core/auth/token-keys.ts).
      TOKEN_KEYS_FILE: join(keysDir, 'token-keys.json'),
      // Behind the edge the functions log CloudFront-Viewer-Address, which the twin's edge sets as CloudFront does.
      ...(options.edge ? { [behindEdgeVariable]: 'true' } : {}),
      // What the edge sends the gateway in x-origin-verify (on AWS a secret of the edge stack).
      ORIGIN_SECRET_FILE: join(keysDir, 'origin-secret.json'),
      // Tenant domains are <slug>-<id>.localhost: browsers resolve them to this machine.
      TENANT_ORIGIN: `http://{dominio}:${port}`,
    };
    Object.assign(process.env, environment);
    await ensureSigningKey();
    await ensureTokenKeys();
    const originSecretValue = randomBytes(36).toString('base64url');
    writeFileSync(environment.ORIGIN_SECRET_FILE as string, `${JSON.stringify({ values: [originSecretValue] })}\n`, {
      mode: 0o600,
    });
    const client = new DynamoDBClient({ endpoint: dynamo.endpoint });
    await ensureTable(client, localTableName);
    client.destroy();
    // DynamoDB Local answers a transaction before its COMMIT has run: the functions (and the local client
    // below) hear of one only once it is on disk, so an answer sent on it survives a kill -9. In memory
    // there is no disk to wait for, and every later request already runs after that COMMIT.
    if (options.dataDir) {
      const closeCommitBarrier = awaitTransactionCommits(db(), dynamo.endpoint);
      stops.push(async () => closeCommitBarrier());
    }
    // Data an earlier version stored is brought to the shape this one reads before anything serves (as a deploy does).
    const migrated = await migrateStoredData(Date.now() + 10 * 60_000);
    if (!migrated.done) throw new Error(`The stored data did not finish migrating (at version ${migrated.applied}): start again`);
    const local = await ensureLocalClient({
      stateFile: options.dataDir && join(options.dataDir, 'local-client.json'),
      preferredToken: options.clientToken,
    });
    // The functions run in this process: their DynamoDB requests take turns per invocation.
    shareDynamoInTurns(db());
    const sqs = new SQSClient({ endpoint: queues.endpoint });
    stops.push(async () => sqs.destroy());
    const pollers: Poller[] = queueConsumers
      .filter((consumer) => options.consumers?.includes(consumer.queue) ?? true)
      .map((consumer) => startPoller({ consumer, queues, sqs, log: options.log }));
    stops.push(async () => {
      await Promise.all(pollers.map((poller) => poller.stop()));
    });
    if (options.clock !== false) {
      const clocks = timedFunctions.map((timed) => startClock({ timed, log: options.log }));
      stops.push(async () => {
        await Promise.all(clocks.map((clock) => clock.stop()));
      });
    }
    const gateway = await startGateway({
      // With the edge, callers reach the gateway through it: the edge takes the port.
      port: options.edge ? await freePort() : port,
      log: options.log,
      biStandInHosts: `.${tenantBaseDomain}`,
      authorizer: options.edge
        ? { handler: 'edge/origin-authorizer', identityHeader: ORIGIN_HEADER, cacheSeconds: AUTHORIZER_CACHE_SECONDS }
        : undefined,
    });
    stops.push(() => gateway.close());
    const edge = options.edge
      ? await startEdge({
          port,
          originUrl: gateway.url,
          originSecret: originSecretValue,
          viewerRequest: loadViewerRequest(
            { anonymousPaths: anonymousPathsOf(routes), acceptUnsigned: unsignedTokensAccepted() },
            keyValueStoreOfKeyringFile(),
          ),
        })
      : undefined;
    if (edge) stops.push(() => edge.close());
    return {
      url: edge?.url ?? gateway.url,
      originUrl: gateway.url,
      clientId: local.clientId,
      clientToken: local.token,
      dynamodbEndpoint: dynamo.endpoint,
      tableName: localTableName,
      sqsEndpoint: queues.endpoint,
      queueUrls: queues.urls,
      deadLetterQueueUrls: queues.deadLetterUrls,
      environment,
      stop: stopAll,
    };
  } catch (error) {
    await stopAll();
    throw error;
  }
}
