import { chmodSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { type AddressInfo, createServer } from 'node:net';
import { join } from 'node:path';
import { afterAll, describe, expect, test, vi } from 'vitest';
import { javaMissingMessage, javaTooOldMessage } from '#local/dynamodb-local.ts';
import { answers, runToEnd, startTwinProcess } from '#test/support/processes.ts';

// Each test starts processes (twins with DynamoDB Local, the CLI, a whole vitest run) beside the other
// test files: a guard against a hang, generous enough for a busy machine, not a measure of speed.
vi.setConfig({ testTimeout: 120_000 });

const scratch = mkdtempSync(join(tmpdir(), 'twin-test-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

const bearer = (token: string) => ({ authorization: `Bearer ${token}` });

/** The arguments of the DynamoDB Local process serving `port`, read from /proc (Linux). */
function dynamoDbLocalArguments(port: string): string[] {
  for (const pid of readdirSync('/proc').filter((name) => /^\d+$/.test(name))) {
    let args: string[];
    try {
      args = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0');
    } catch {
      continue; // gone since the listing
    }
    const at = args.indexOf('-port');
    if (args.some((arg) => arg.endsWith('DynamoDBLocal.jar')) && at >= 0 && args[at + 1] === port) return args;
  }
  throw new Error(`No DynamoDB Local process on port ${port}`);
}

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
    // Nothing of the developer's machine leaves it unasked: DynamoDB Local's telemetry is off.
    expect(dynamoDbLocalArguments(new URL(twin.dynamodbEndpoint).port)).toContain('-disableTelemetry');

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
    const [local] = JSON.parse(listed.output.trim().split('\n').at(-1) ?? '[]') as Array<{ id: number; nome: string }>;
    expect(local).toEqual(expect.objectContaining({ nome: 'local' }));
    // An operator's rotation keeps the remembered token working for a day as the previous one: the next start
    // takes it back as the one token of the twin's client.
    const rotated = await runToEnd('bin/admin.ts', ['client', 'rotate-token', '--id', String(local?.id), '--json'], {
      DATA_DIR: dataDir,
      TABLE_NAME: undefined,
    });
    expect(rotated.code).toBe(0);
    const operators = (JSON.parse(rotated.output.trim().split('\n').at(-1) ?? '{}') as { token: string }).token;
    first.child.kill('SIGTERM');
    expect(await first.exited).toBe(0);

    const second = await startTwinProcess([], { DATA_DIR: dataDir, LOCAL_CLIENT_TOKEN: undefined });
    try {
      expect(second.clientToken).toBe(first.clientToken);
      expect((await fetch(`${second.url}/whoami`, { headers: bearer(second.clientToken) })).status).toBe(200);
      expect((await fetch(`${second.url}/whoami`, { headers: bearer(operators) })).status).toBe(401);
      const tenants = await fetch(`${second.url}/tenants`, { headers: bearer(second.clientToken) });
      expect(((await tenants.json()) as { data: Array<{ nome: string }> }).data.map((tenant) => tenant.nome)).toEqual(['Kept']);
    } finally {
      second.child.kill('SIGTERM');
      await second.exited;
    }
  });

  test('the admin CLI works on the running twin also in memory, and refuses a data folder the running twin does not use', async () => {
    const dataDir = join(scratch, 'in-memory');
    const twin = await startTwinProcess(['--in-memory'], { DATA_DIR: dataDir, LOCAL_CLIENT_TOKEN: undefined });
    try {
      const local = {
        DATA_DIR: dataDir,
        TABLE_NAME: undefined,
        DYNAMODB_ENDPOINT: undefined,
        SIGNING_KEYS_FILE: undefined,
        // The running twin's token keys, which it records: not the test run's twin's.
        TOKEN_KEYS_FILE: undefined,
      };
      const created = await runToEnd('bin/admin.ts', ['client', 'create', '--name', 'Beside', '--json'], local);
      expect(created.code).toBe(0);
      const { token } = JSON.parse(created.output.trim().split('\n').at(-1) ?? '{}') as { token: string };
      expect((await fetch(`${twin.url}/whoami`, { headers: bearer(token) })).status).toBe(200);

      const elsewhere = { ...local, DATA_DIR: join(scratch, 'elsewhere'), PORT: new URL(twin.url).port };
      const refused = await runToEnd('bin/admin.ts', ['client', 'create', '--name', 'Lost'], elsewhere);
      expect(refused.code).toBe(1);
      expect(refused.output).toContain(`A twin is running at http://localhost:${new URL(twin.url).port}, but not on DATA_DIR`);
    } finally {
      twin.child.kill('SIGTERM');
      await twin.exited;
    }
  });

  test('a LOCAL_CLIENT_TOKEN the twin would refuse stops it at once, in one line naming it', async () => {
    const result = await runToEnd('bin/local.ts', ['--in-memory'], {
      PORT: '0',
      DATA_DIR: join(scratch, 'refused-token'),
      UNSIGNED_TOKENS: 'refuse',
      LOCAL_CLIENT_TOKEN: 'cli_an_unsigned_token',
    });
    expect(result.code).toBe(1);
    expect(result.output.trim()).toMatch(/^LOCAL_CLIENT_TOKEN is refused before any lookup/);
    expect(result.output).not.toMatch(/^\s+at /m);
  });

  test('a busy PORT stops it at once, in one line naming the port and what to do', async () => {
    const holder = createServer();
    await new Promise<void>((resolve) => holder.listen(0, '127.0.0.1', resolve));
    const { port } = holder.address() as AddressInfo;
    try {
      const result = await runToEnd('bin/local.ts', ['--in-memory'], { PORT: String(port) });
      expect(result.code).toBe(1);
      expect(result.output.trim()).toBe(
        `Port ${port} is in use (a twin already running?): stop what holds it, or start on another one: PORT=${port + 1} npm start`,
      );
    } finally {
      holder.close();
    }
  });

  test('without Java it fails with one line saying how to install it', async () => {
    const result = await runToEnd('bin/local.ts', ['--in-memory'], { PATH: pathWithoutJava(), PORT: '0' });
    expect(result.code).toBe(1);
    expect(result.output.trim()).toBe(javaMissingMessage);
  });

  test('with a Java older than 17 it fails with one line naming the version found', async () => {
    for (const [banner, version] of [
      ['openjdk version "11.0.20" 2023-07-18', 11],
      ['java version "1.8.0_392"', 8],
    ] as const) {
      const result = await runToEnd('bin/local.ts', ['--in-memory'], { PATH: pathWithoutJava(banner), PORT: '0' });
      expect(result.code, banner).toBe(1);
      expect(result.output.trim(), banner).toBe(javaTooOldMessage(version));
    }
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

describe('npm test without a browser', () => {
  test('fails the browser tests alone, each saying why and what to set', async () => {
    const result = await runToEnd(
      'node_modules/vitest/vitest.mjs',
      ['run', '--project', 'connected', 'test/e2e/docs-page.test.ts', 'test/e2e/smoke.test.ts'],
      { CHROMIUM_PATH: join(scratch, 'no-such-chromium'), NO_COLOR: '1', FORCE_COLOR: undefined },
    );
    expect(result.code).toBe(1);
    expect(result.output).toContain('No browser for this test (Error: CHROMIUM_PATH is ');
    expect(result.output).toMatch(/Tests\s+1 failed \| \d+ passed/);
  });
});

/**
 * A PATH holding only `node`, and a `java` printing `javaBanner` for `java -version` (on stderr, as
 * an installed Java does) when one is given.
 */
function pathWithoutJava(javaBanner?: string): string {
  const binDir = join(scratch, javaBanner ? 'bin-with-old-java' : 'bin-without-java');
  rmSync(binDir, { recursive: true, force: true });
  mkdirSync(binDir);
  symlinkSync(process.execPath, join(binDir, 'node'));
  if (javaBanner) {
    writeFileSync(join(binDir, 'java'), `#!/bin/sh\necho '${javaBanner}' >&2\n`);
    chmodSync(join(binDir, 'java'), 0o755);
  }
  return binDir;
}
