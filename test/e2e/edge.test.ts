/**
 * The edge on the twin (`npm start -- --edge`), as a production stage has it: the viewer function the
 * stack deploys refuses forged and malformed tokens before anything behind it runs, and the gateway's
 * authorizer (the stack's origin check) refuses whatever did not come through the edge. The probe the
 * edge stack runs every minute passes against it, and fails where AWS's would.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, test, vi } from 'vitest';
import { probeEdge } from '#functions/core/edge/edge-probe.ts';
import type { TwinRuntime } from '#local/environment.ts';
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
    // Data on disk: the origin secret is then a file of DATA_DIR, which a test reads to play CloudFront itself.
    twin = await startTwinProcess(['--edge'], { LOCAL_CLIENT_TOKEN: undefined, DATA_DIR: dataDir, POWERTOOLS_LOG_LEVEL: 'INFO' });
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

  test('refuses a repeated Authorization header at the edge, as the handler would (CloudFront joins the values)', async () => {
    const answer = await new Promise<{ status: number; fromOrigin: boolean }>((resolve, reject) => {
      const sent = request(`${twin.url}/tenant`, {
        // Raw header lines: the field twice.
        headers: [
          'host',
          new URL(twin.url).host,
          'authorization',
          `Bearer ${tenantToken}`,
          'authorization',
          `Bearer ${tenantToken}`,
        ],
      });
      sent.on('response', (response) => {
        response.resume();
        resolve({ status: response.statusCode ?? 0, fromOrigin: 'apigw-requestid' in response.headers });
      });
      sent.on('error', reject);
      sent.end();
    });
    expect(answer).toEqual({ status: 401, fromOrigin: false });
  });

  test('the origin refuses what did not come through the edge: 401 without the header, 403 with a wrong one', async () => {
    const missing = await fetch(`${origin}/tenant`, { headers: bearer(tenantToken) });
    expect(missing.status).toBe(401);
    expect(await missing.json()).toEqual({ message: 'Unauthorized' });
    const wrong = await fetch(`${origin}/health`, { headers: { 'x-origin-verify': 'a guess' } });
    expect(wrong.status).toBe(403);
    expect(await wrong.json()).toEqual({ message: 'Forbidden' });
  });

  test('behind the edge, each request line logs the address CloudFront says it saw, never one the caller sends', async () => {
    const whoami = async (base: string, headers: Record<string, string>) => {
      const answer = await fetch(`${base}/whoami`, { headers: { ...bearer(twin.clientToken), ...headers } });
      expect(answer.status).toBe(200);
      const requestId = answer.headers.get('x-request-id');
      const line = await vi.waitFor(() => {
        const found = twin
          .output()
          .split('\n')
          .filter((text) => text.startsWith('{'))
          .map((text) => JSON.parse(text) as Record<string, unknown>)
          .find((entry) => entry.message === 'Request handled' && entry.requestId === requestId);
        if (!found) throw new Error('not logged yet');
        return found;
      });
      return line.viewerAddress;
    };
    // Through the edge, the caller's own header is replaced by what the edge saw.
    expect(await whoami(twin.url, { 'cloudfront-viewer-address': '198.51.100.77:1234' })).toMatch(
      /^(127\.0\.0\.1|::1|::ffff:127\.0\.0\.1)$/,
    );
    // Playing CloudFront (the origin secret and the header it adds): the header is what is logged.
    const { values } = JSON.parse(readFileSync(join(dataDir, 'origin-secret.json'), 'utf8')) as { values: string[] };
    expect(await whoami(origin, { 'x-origin-verify': values[0] as string, 'cloudfront-viewer-address': '203.0.113.5:443' })).toBe(
      '203.0.113.5',
    );
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
