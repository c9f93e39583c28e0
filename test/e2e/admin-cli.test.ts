import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect, inject, test } from 'vitest';
import { api, expectErrorEnvelope } from '#test/support/api.ts';
import { runToEnd } from '#test/support/processes.ts';

/** The CLI's AWS mode (TABLE_NAME set), pointed at the test run's DynamoDB Local like a deployed table. */
const againstTable = { TABLE_NAME: process.env.TABLE_NAME, DYNAMODB_ENDPOINT: inject('dynamodbEndpoint') };

test('client create prints a working token once; rotate-token replaces it; list shows the client', async () => {
  const name = `CLI ${crypto.randomUUID()}`;
  const created = await runToEnd('bin/admin.ts', ['client', 'create', '--name', name, '--json'], againstTable);
  expect(created.code).toBe(0);
  const { id, token } = JSON.parse(created.output.trim()) as { id: number; token: string };
  expect(token).toMatch(/^cli_/);
  expect((await api('GET', '/whoami', { token })).body.data).toEqual({ kind: 'client', clientId: id });

  const listed = await runToEnd('bin/admin.ts', ['client', 'list'], againstTable);
  expect(listed.code).toBe(0);
  expect(listed.output).toContain(name);
  expect(listed.output).not.toContain(token);

  const rotated = await runToEnd('bin/admin.ts', ['client', 'rotate-token', '--id', String(id), '--json'], againstTable);
  expect(rotated.code).toBe(0);
  const fresh = (JSON.parse(rotated.output.trim()) as { token: string }).token;
  expectErrorEnvelope(await api('GET', '/whoami', { token }), 401);
  expect((await api('GET', '/whoami', { token: fresh })).status).toBe(200);
});

test('bad usage exits 2 with the usage text; an unknown client exits 1', async () => {
  for (const args of [
    ['client', 'create'],
    ['client', 'rotate-token', '--id', 'x'],
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
