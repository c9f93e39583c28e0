import { mkdirSync, mkdtempSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, test } from 'vitest';
import { javaMissingMessage } from '#local/dynamodb-local.ts';
import { answers, runToEnd, startTwinProcess } from '#test/support/processes.ts';

const scratch = mkdtempSync(join(tmpdir(), 'twin-test-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

const bearer = (token: string) => ({ authorization: `Bearer ${token}` });

describe('npm start (the local twin as its own process)', () => {
  test('--in-memory serves /health, uses LOCAL_CLIENT_TOKEN, and Ctrl-C stops DynamoDB Local too', async () => {
    const token = `cli_test_${crypto.randomUUID()}`;
    const twin = await startTwinProcess(['--in-memory'], { LOCAL_CLIENT_TOKEN: token });
    expect(twin.clientToken).toBe(token);
    expect(twin.output()).toContain('in memory');
    expect((await fetch(`${twin.url}/health`)).status).toBe(200);
    const whoami = await fetch(`${twin.url}/whoami`, { headers: bearer(token) });
    expect(((await whoami.json()) as { data: { kind: string } }).data.kind).toBe('client');
    expect(await answers(twin.dynamodbEndpoint)).toBe(true);

    twin.child.kill('SIGINT');
    expect(await twin.exited).toBe(0);
    expect(await answers(twin.dynamodbEndpoint)).toBe(false);
    expect(await answers(twin.url)).toBe(false);
  });

  test('data and the client token survive a restart; the admin CLI reaches the running twin', async () => {
    const dataDir = join(scratch, 'data');
    const first = await startTwinProcess([], { DATA_DIR: dataDir, LOCAL_CLIENT_TOKEN: undefined });
    const created = await fetch(`${first.url}/tenants`, {
      method: 'POST',
      headers: { ...bearer(first.clientToken), 'content-type': 'application/json' },
      body: JSON.stringify({ nome: 'Kept', ativo: true }),
    });
    expect(created.status).toBe(201);
    const listed = await runToEnd('bin/admin.ts', ['client', 'list', '--json'], { DATA_DIR: dataDir, TABLE_NAME: undefined });
    expect(listed.code).toBe(0);
    expect(JSON.parse(listed.output.trim().split('\n').at(-1) ?? '[]')).toEqual([expect.objectContaining({ nome: 'local' })]);
    first.child.kill('SIGTERM');
    expect(await first.exited).toBe(0);

    const second = await startTwinProcess([], { DATA_DIR: dataDir, LOCAL_CLIENT_TOKEN: undefined });
    try {
      expect(second.clientToken).toBe(first.clientToken);
      const tenants = await fetch(`${second.url}/tenants`, { headers: bearer(second.clientToken) });
      expect(((await tenants.json()) as { data: Array<{ nome: string }> }).data.map((tenant) => tenant.nome)).toEqual(['Kept']);
    } finally {
      second.child.kill('SIGTERM');
      await second.exited;
    }
  });

  test('without Java it fails with one line saying how to install it', async () => {
    const result = await runToEnd('bin/local.ts', ['--in-memory'], { PATH: pathWithoutJava(), PORT: '0' });
    expect(result.code).toBe(1);
    expect(result.output.trim()).toBe(javaMissingMessage);
  });
});

describe('npm test without Java', () => {
  test('stops before any test with the same one line, and no stack trace', async () => {
    // The connected project's global setup is where Java is needed; one small file is enough to reach it.
    const result = await runToEnd('node_modules/vitest/vitest.mjs', ['run', '--project', 'connected', 'test/e2e/smoke.test.ts'], {
      PATH: pathWithoutJava(),
      NO_COLOR: '1',
      FORCE_COLOR: undefined,
    });
    expect(result.code).toBe(1);
    expect(result.output).toContain(javaMissingMessage);
    expect(result.output).not.toMatch(/^\s+at /m);
  });
});

/** A PATH holding only `node`. */
function pathWithoutJava(): string {
  const binDir = join(scratch, 'bin-without-java');
  rmSync(binDir, { recursive: true, force: true });
  mkdirSync(binDir);
  symlinkSync(process.execPath, join(binDir, 'node'));
  return binDir;
}
