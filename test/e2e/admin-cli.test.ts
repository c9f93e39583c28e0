import { expect, inject, test } from 'vitest';
import { api, expectErrorEnvelope } from '../support/api.ts';
import { runToEnd } from '../support/processes.ts';

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
