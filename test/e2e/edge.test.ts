/**
 * The edge on the twin (`npm start -- --edge`), as a production stage has it: the viewer function the
 * stack deploys refuses forged and malformed tokens before anything behind it runs, and the gateway's
 * authorizer (the stack's origin check) refuses whatever did not come through the edge. The probe the
 * edge stack runs every minute passes against it, and fails where AWS's would.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { probeEdge } from '#functions/core/edge/edge-probe.ts';
import type { TwinRuntime } from '#local/twin.ts';
import { type TwinProcess, startTwinProcess } from '#test/support/processes.ts';

const bearer = (token: string) => ({ authorization: `Bearer ${token}` });
const json = { 'content-type': 'application/json' };

describe('the twin with the edge in front', () => {
  let twin: TwinProcess;
  let origin: string;
  let tenantToken: string;
  const dataDir = mkdtempSync(join(tmpdir(), 'edge-twin-'));
  const tokenKeysFile = process.env.TOKEN_KEYS_FILE;

  beforeAll(async () => {
    twin = await startTwinProcess(['--in-memory', '--edge'], { LOCAL_CLIENT_TOKEN: undefined, DATA_DIR: dataDir });
    origin = twin.originUrl as string;
    expect(origin).toMatch(/^http:\/\/localhost:\d+$/);
    expect(origin).not.toBe(twin.url);
    const created = await fetch(`${twin.url}/tenants`, {
      method: 'POST',
      headers: { ...bearer(twin.clientToken), ...json },
      body: JSON.stringify({ nome: 'Edge', ativo: true }),
    });
    expect(created.status).toBe(201);
    tenantToken = ((await created.json()) as { data: { token: string } }).data.token;
  });

  afterAll(async () => {
    twin?.child.kill('SIGTERM');
    await twin?.exited;
    rmSync(dataDir, { recursive: true, force: true });
    process.env.TOKEN_KEYS_FILE = tokenKeysFile;
  });

  test('serves callers with real tokens, in any spelling of the scheme, and the routes without a token', async () => {
    for (const scheme of ['Bearer', 'bearer', 'BEARER'])
      expect((await fetch(`${twin.url}/tenant`, { headers: { authorization: `${scheme}  ${tenantToken}` } })).status).toBe(200);
    const health = await fetch(`${twin.url}/health`);
    expect(health.status).toBe(200);
    // It went through to the gateway: API Gateway names every request it answers.
    expect(health.headers.get('apigw-requestid')).toBeTruthy();
    expect((await fetch(`${twin.url}/.well-known/jwks.json`, { headers: { authorization: 'Basic whatever' } })).status).toBe(200);
  });

  test('refuses a forged token at the edge, in the service’s envelope, without the gateway hearing of it', async () => {
    const forged = `${tenantToken.slice(0, -1)}${tenantToken.endsWith('A') ? 'B' : 'A'}`;
    for (const authorization of [`Bearer ${forged}`, `Bearer\t${tenantToken}`, 'Bearer', 'Basic abc', undefined]) {
      const answer = await fetch(`${twin.url}/tenant`, { headers: authorization === undefined ? {} : { authorization } });
      expect(answer.status, authorization).toBe(401);
      expect(answer.headers.get('apigw-requestid'), authorization).toBeNull();
      expect(answer.headers.get('www-authenticate')).toMatch(/^Bearer/);
      expect(await answer.json()).toMatchObject({ status: 'error', success: false, code: 'unauthorized' });
    }
  });

  test('the origin refuses what did not come through the edge: 401 without the header, 403 with a wrong one', async () => {
    const missing = await fetch(`${origin}/tenant`, { headers: bearer(tenantToken) });
    expect(missing.status).toBe(401);
    expect(await missing.json()).toEqual({ message: 'Unauthorized' });
    const wrong = await fetch(`${origin}/health`, { headers: { 'x-origin-verify': 'a guess' } });
    expect(wrong.status).toBe(403);
    expect(await wrong.json()).toEqual({ message: 'Forbidden' });
  });

  test('the edge probe passes through the edge, and fails around it', async () => {
    // The probe signs its token with the twin's keys, as the edge stack's reads the service's secret.
    const runtime = JSON.parse(readFileSync(join(dataDir, 'twin.json'), 'utf8')) as TwinRuntime;
    process.env.TOKEN_KEYS_FILE = runtime.tokenKeysFile;
    expect(await probeEdge(twin.url)).toEqual([
      { name: 'health', ok: true },
      { name: 'token', ok: true },
    ]);
    const around = await probeEdge(origin);
    expect(around.map((check) => check.ok)).toEqual([false, false]);
  });
});
