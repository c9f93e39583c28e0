import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DeleteTableCommand, DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { PutCommand } from '@aws-sdk/lib-dynamodb';
import { expect, inject, test, vi } from 'vitest';
import { hashToken } from '#functions/core/auth/tokens.ts';
import { createClient, rotateClientToken } from '#functions/core/clients/clients.ts';
import { db, getItem } from '#functions/core/store/dynamo.ts';
import * as stored from '#functions/core/store/entity-declarations.ts';
import { ensureTable } from '#local/create-table.ts';
import { api, expectErrorEnvelope, newTenant } from '#test/support/api.ts';
import { bundleOf, publish } from '#test/support/templates.ts';
import { runToEnd } from '#test/support/processes.ts';

/** The CLI's AWS mode (TABLE_NAME set), pointed at the test run's DynamoDB Local like a deployed table. */
// Each test runs the CLI as its own process, several times, beside the other test files: a guard
// against a hang, generous enough for a busy machine, not a measure of speed.
vi.setConfig({ testTimeout: 120_000 });

const againstTable = { TABLE_NAME: process.env.TABLE_NAME, DYNAMODB_ENDPOINT: inject('dynamodbEndpoint') };

test('client create prints a working token once; rotate-token replaces it, the old one kept for its grace; list shows the client', async () => {
  const name = `CLI ${crypto.randomUUID()}`;
  const created = await runToEnd('bin/admin.ts', ['client', 'create', '--name', name, '--json'], againstTable);
  expect(created.code).toBe(0);
  const { id, token } = JSON.parse(created.output.trim()) as { id: number; token: string };
  expect(token).toMatch(/^cli_/);
  expect((await api('GET', '/whoami', { token })).body.data).toEqual({
    kind: 'client',
    clientId: id,
    tokenId: hashToken(token).slice(0, 16),
  });

  const listed = await runToEnd('bin/admin.ts', ['client', 'list'], againstTable);
  expect(listed.code).toBe(0);
  expect(listed.output).toContain(name);
  expect(listed.output).not.toContain(token);

  const rotate = ['client', 'rotate-token', '--id', String(id), '--previous-valid-for', '3600', '--json'];
  const rotated = await runToEnd('bin/admin.ts', rotate, againstTable);
  expect(rotated.code).toBe(0);
  const { token: fresh, previousExpiresAt } = JSON.parse(rotated.output.trim()) as { token: string; previousExpiresAt: string };
  expect(Date.parse(previousExpiresAt)).toBeGreaterThan(Date.now() + 3_500_000);
  // The old token works until then, and the list says when each was last used.
  expect((await api('GET', '/whoami', { token })).status).toBe(200);
  expect((await api('GET', '/whoami', { token: fresh })).status).toBe(200);
  const withPrevious = await runToEnd('bin/admin.ts', ['client', 'list', '--json'], againstTable);
  const listedClient = (JSON.parse(withPrevious.output.trim()) as Array<{ id: number }>).find((client) => client.id === id);
  expect(listedClient).toMatchObject({
    currentToken: { lastUsedAt: expect.any(String) },
    previousToken: { expiresAt: previousExpiresAt, lastUsedAt: expect.any(String) },
  });
  const ended = await runToEnd('bin/admin.ts', ['client', 'end-previous-token', '--id', String(id), '--json'], againstTable);
  expect(JSON.parse(ended.output.trim())).toEqual({ id, ended: true });
  expectErrorEnvelope(await api('GET', '/whoami', { token }), 401);
  expect((await api('GET', '/whoami', { token: fresh })).status).toBe(200);
});

test('bad usage exits 2 with the usage text; an unknown client exits 1', async () => {
  for (const args of [
    ['client', 'create'],
    ['client', 'rotate-token', '--id', 'x'],
    ['client', 'rotate-token', '--id', '1', '--previous-valid-for', '604801'],
    ['tenant', 'drop'],
  ]) {
    const result = await runToEnd('bin/admin.ts', args, againstTable);
    expect(result.code).toBe(2);
    expect(result.output).toContain('Usage: npm run admin');
  }
  const missing = await runToEnd('bin/admin.ts', ['client', 'rotate-token', '--id', '987654321'], againstTable);
  expect(missing.code).toBe(1);
  expect(missing.output).toContain('Client 987654321 not found');
});

test('keys rotate makes a new active key and keeps the old one published; keys list never shows private parts', async () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'admin-keys-'));
  try {
    const local = { DATA_DIR: dataDir, TABLE_NAME: undefined, DYNAMODB_ENDPOINT: undefined, SIGNING_KEYS_FILE: undefined };
    const empty = await runToEnd('bin/admin.ts', ['keys', 'list'], local);
    expect(empty.output).toContain('No signing key yet');
    const first = JSON.parse((await runToEnd('bin/admin.ts', ['keys', 'rotate', '--json'], local)).output.trim()) as {
      kid: string;
    };
    const second = JSON.parse((await runToEnd('bin/admin.ts', ['keys', 'rotate', '--json'], local)).output.trim()) as {
      kid: string;
    };
    const listed = await runToEnd('bin/admin.ts', ['keys', 'list', '--json'], local);
    const keys = JSON.parse(listed.output.trim()) as Array<{ kid: string; retiredAt: string | null }>;
    expect(keys.map((key) => [key.kid, key.retiredAt === null])).toEqual([
      [second.kid, true],
      [first.kid, false],
    ]);
    expect(listed.output).not.toContain('"d"');
    const file = join(dataDir, 'jwt-keys.json');
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(JSON.parse(readFileSync(file, 'utf8')).keys[0].privateJwk.d).toEqual(expect.any(String));
  } finally {
    rmSync(dataDir, { recursive: true, force: true });
  }
});

test('keys commands against a deployed stack need the secret', async () => {
  const result = await runToEnd('bin/admin.ts', ['keys', 'rotate'], { ...againstTable, SIGNING_KEYS_SECRET_ARN: undefined });
  expect(result.code).toBe(2);
  expect(result.output).toContain('SIGNING_KEYS_SECRET_ARN');
});

test('token-keys rotate adds k<n+1> as current and keeps the others; token-keys list never shows a key', async () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'admin-token-keys-'));
  try {
    const local = { DATA_DIR: dataDir, TABLE_NAME: undefined, DYNAMODB_ENDPOINT: undefined, TOKEN_KEYS_FILE: undefined };
    const empty = await runToEnd('bin/admin.ts', ['token-keys', 'list'], local);
    expect(empty.output).toContain('No token key yet');
    const first = JSON.parse((await runToEnd('bin/admin.ts', ['token-keys', 'rotate', '--json'], local)).output.trim()) as {
      keyId: string;
    };
    const second = JSON.parse((await runToEnd('bin/admin.ts', ['token-keys', 'rotate', '--json'], local)).output.trim()) as {
      keyId: string;
      keys: string[];
    };
    expect([first.keyId, second.keyId, second.keys]).toEqual(['1', '2', ['1', '2']]);
    const listed = await runToEnd('bin/admin.ts', ['token-keys', 'list', '--json'], local);
    expect(JSON.parse(listed.output.trim())).toEqual([
      { id: '1', current: false },
      { id: '2', current: true },
    ]);
    const file = join(dataDir, 'token-keys.json');
    expect(statSync(file).mode & 0o777).toBe(0o600);
    const stored = JSON.parse(readFileSync(file, 'utf8')) as Record<string, string>;
    expect(stored.current).toBe('2');
    expect(listed.output).not.toContain(stored.k1 as string);
    expect((await runToEnd('bin/admin.ts', ['token-keys', 'list'], local)).output).not.toContain(stored.k2 as string);
  } finally {
    rmSync(dataDir, { recursive: true, force: true });
  }
});

test('token-keys commands against a deployed stack need the secret; so do the client commands that mint', async () => {
  const rotate = await runToEnd('bin/admin.ts', ['token-keys', 'rotate'], { ...againstTable, TOKEN_KEYS_SECRET_ARN: undefined });
  expect(rotate.code).toBe(2);
  expect(rotate.output).toContain('TOKEN_KEYS_SECRET_ARN');
  const sync = await runToEnd('bin/admin.ts', ['token-keys', 'sync'], {
    ...againstTable,
    TOKEN_KEYS_SECRET_ARN: 'arn:aws:secretsmanager:eu-west-1:123456789012:secret:TokenKeys-abcdef',
    TOKEN_KEYS_KVS_ARN: undefined,
  });
  expect(sync.code).toBe(2);
  expect(sync.output).toContain('token-keys sync needs TOKEN_KEYS_KVS_ARN');
  // Rotating on a deployed stage without the edge's store would have the edge refuse every new token.
  const blind = await runToEnd('bin/admin.ts', ['token-keys', 'rotate'], {
    ...againstTable,
    TOKEN_KEYS_SECRET_ARN: 'arn:aws:secretsmanager:eu-west-1:123456789012:secret:TokenKeys-abcdef',
    TOKEN_KEYS_KVS_ARN: undefined,
  });
  expect(blind.code).toBe(2);
  expect(blind.output).toContain('token-keys rotate on a deployed stack needs TOKEN_KEYS_KVS_ARN');
  expect(blind.output).toContain('--without-edge');
  const create = await runToEnd('bin/admin.ts', ['client', 'create', '--name', 'No keys'], {
    ...againstTable,
    TOKEN_KEYS_SECRET_ARN: undefined,
    TOKEN_KEYS_FILE: undefined,
  });
  expect(create.code).toBe(2);
  expect(create.output).toContain('TOKEN_KEYS_SECRET_ARN');
  // A deployed table (no local DynamoDB endpoint) with a local keys file: those tokens would verify nowhere.
  const stray = await runToEnd('bin/admin.ts', ['client', 'create', '--name', 'Stray keys'], {
    TABLE_NAME: 'BiTenantAdmin-prod-Table',
    DYNAMODB_ENDPOINT: undefined,
    TOKEN_KEYS_SECRET_ARN: undefined,
    TOKEN_KEYS_FILE: process.env.TOKEN_KEYS_FILE,
  });
  expect(stray.code).toBe(2);
  expect(stray.output).toContain('client commands on a deployed stack need TOKEN_KEYS_SECRET_ARN');
});

test('tokens unsigned lists the owners of tokens issued unsigned, a previous one with its end, and none of the signed ones', async () => {
  const unsigned = await createClient(`Unsigned ${crypto.randomUUID()}`, `cli_${crypto.randomUUID()}`);
  const signed = await createClient(`Signed ${crypto.randomUUID()}`);
  // Unsigned tokens rotated away: one still in its grace period, one past it (its item not yet removed by TTL).
  const rotatedAway = await createClient(`Rotated ${crypto.randomUUID()}`, `cli_${crypto.randomUUID()}`);
  const previousExpiresAt = (await rotateClientToken(rotatedAway.client.clientId))?.previousExpiresAt;
  const expired = await createClient(`Expired ${crypto.randomUUID()}`, `cli_${crypto.randomUUID()}`);
  // The command scans the whole table: here a table of its own holding the two token items as they are
  // stored, since a scan of the table every test file writes to took over a minute late in a run.
  const table = `admin-cli-tokens-${crypto.randomUUID()}`;
  const dynamo = new DynamoDBClient({ endpoint: inject('dynamodbEndpoint') });
  await ensureTable(dynamo, table);
  try {
    for (const { token } of [unsigned, signed, rotatedAway]) {
      const item = await getItem(stored.token.key({ tokenHash: hashToken(token) }));
      await db().send(new PutCommand({ TableName: table, Item: item }));
    }
    const expiredItem = await getItem(stored.token.key({ tokenHash: hashToken(expired.token) }));
    const past = Math.floor(Date.now() / 1000) - 1;
    await db().send(new PutCommand({ TableName: table, Item: { ...expiredItem, expiresAt: past } }));
    const ownTable = { ...againstTable, TABLE_NAME: table };
    const result = await runToEnd('bin/admin.ts', ['tokens', 'unsigned', '--json'], ownTable);
    expect(result.code).toBe(0);
    const listed = JSON.parse(result.output.trim()) as Array<{ kind: string; clientId: number }>;
    expect(listed).toHaveLength(2);
    expect(listed).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ kind: 'client', clientId: unsigned.client.clientId, expiresAt: null }),
        expect.objectContaining({ kind: 'client', clientId: rotatedAway.client.clientId, expiresAt: previousExpiresAt }),
      ]),
    );
    const text = await runToEnd('bin/admin.ts', ['tokens', 'unsigned'], ownTable);
    expect(text.output).toContain(`client ${unsigned.client.clientId}`);
    expect(text.output).not.toContain(unsigned.token);
  } finally {
    await dynamo.send(new DeleteTableCommand({ TableName: table }));
    dynamo.destroy();
  }
});

test("rollout start rolls a version out on the stack's queue (a dry run first); rollout watch follows it to its end", async () => {
  const { client, token } = await createClient(`CLI rollout ${crypto.randomUUID()}`);
  const bundle = bundleOf(`CLI fleet ${crypto.randomUUID()}`, [{ key: 'load', writes: ['orders'] }]);
  const templateId = await publish(token, bundle);
  for (const nome of ['One', 'Two']) await newTenant(token, { nome, templateId });
  await api('PUT', `/tenants/templates/${templateId}`, {
    token,
    body: bundleOf(bundle.nome, [{ key: 'load', writes: ['orders', 'stock'] }]),
  });
  const withQueue = { ...againstTable, SQS_ENDPOINT: inject('sqsEndpoint'), ROLLOUT_QUEUE_URL: inject('queueUrls').rollout };
  const ids = ['--client', String(client.clientId), '--template', String(templateId)];

  const dry = await runToEnd('bin/admin.ts', ['rollout', 'start', ...ids, '--dry-run'], againstTable);
  expect(dry.code).toBe(0);
  expect(dry.output).toContain('Dry run: 2 tenant(s) in 2 wave(s) of 1');
  expect(dry.output).toMatch(/v1 -> v2 applied; tables created 1, rebuilt 0/);

  const refused = await runToEnd('bin/admin.ts', ['rollout', 'start', ...ids], { ...againstTable, ROLLOUT_QUEUE_URL: undefined });
  expect(refused.code).toBe(2);
  expect(refused.output).toContain('ROLLOUT_QUEUE_URL (the RolloutQueueUrl output)');
  const invalid = await runToEnd('bin/admin.ts', ['rollout', 'start', ...ids, '--pause', '90000'], withQueue);
  expect(invalid.code).toBe(2);
  expect(invalid.output).toContain('The rollout is not valid: /pauseSeconds');

  const started = await runToEnd('bin/admin.ts', ['rollout', 'start', ...ids, '--wave-size', '1', '--json'], withQueue);
  expect(started.code).toBe(0);
  const rollout = JSON.parse(started.output.trim()) as { id: number; state: string };
  expect(rollout.state).toBe('running');
  const watched = await runToEnd('bin/admin.ts', ['rollout', 'watch', ...ids, '--id', String(rollout.id)], againstTable);
  expect(watched.code).toBe(0);
  expect(watched.output.trim().split('\n').at(-1)).toBe(
    `rollout ${rollout.id} v2 finished: 2 applied, 0 unchanged, 0 waiting for activation, 0 failed, 0 pending`,
  );
});
