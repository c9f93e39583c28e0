/**
 * What the service logs, read from a twin of its own (`npm start -- --in-memory` in a separate
 * process, its output captured): one JSON line per request with its request id and, for tenant
 * routes, its tenant id, even when requests of several tenants run at once; and never a token,
 * a secret, a login token or a session cookie, whatever the request did with them.
 */
import { afterAll, beforeAll, expect, test } from 'vitest';
import { startTwinProcess, type TwinProcess } from '#test/support/processes.ts';
import { cookiesOf, getOnTenantHost } from '#test/support/tenant-host.ts';

let twin: TwinProcess;
const clientToken = `cli_logs_${crypto.randomUUID()}`;
beforeAll(async () => {
  twin = await startTwinProcess(['--in-memory'], { LOCAL_CLIENT_TOKEN: clientToken, POWERTOOLS_LOG_LEVEL: 'INFO' });
});
afterAll(async () => {
  twin.child.kill('SIGTERM');
  await twin.exited;
});

async function call(method: string, path: string, token: string, body?: unknown, headers: Record<string, string> = {}) {
  const response = await fetch(`${twin.url}${path}`, {
    method,
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', ...headers },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  return {
    status: response.status,
    requestId: response.headers.get('x-request-id') ?? '',
    gatewayRequestId: response.headers.get('apigw-requestid') ?? '',
    body: (await response.json()) as any, // eslint-disable-line @typescript-eslint/no-explicit-any
  };
}

/** The twin's JSON log lines. */
const logLines = () =>
  twin
    .output()
    .split('\n')
    .filter((line) => line.startsWith('{'))
    .map((line) => JSON.parse(line) as Record<string, unknown>);

test('every request logs one line with its request id and tenant id, without cross-talk under concurrency', async () => {
  const tenants = await Promise.all(
    ['Log A', 'Log B'].map(async (nome) => (await call('POST', '/tenants', clientToken, { nome, ativo: true })).body.data),
  );
  const answers = await Promise.all(
    Array.from({ length: 20 }, async (_, index) => {
      const tenant = tenants[index % 2];
      const answer = await call('GET', '/tenant', tenant.token);
      return { requestId: answer.requestId, tenantId: tenant.id as number };
    }),
  );
  await expect.poll(() => logLines().filter((line) => line.message === 'Request handled').length).toBeGreaterThanOrEqual(22);
  const handled = logLines().filter((line) => line.message === 'Request handled');
  for (const { requestId, tenantId } of answers) {
    const lines = handled.filter((line) => line.requestId === requestId);
    expect(lines).toEqual([
      expect.objectContaining({
        routeKey: 'GET /tenant',
        status: 200,
        tenantId,
        function_name: 'get-tenant',
        viewerAddress: expect.stringMatching(/^(127\.0\.0\.1|::1|::ffff:127\.0\.0\.1)$/),
      }),
    ]);
  }
});

test("a caller's X-Request-Id is the request's in its log lines; its access line names API Gateway's id too", async () => {
  const sent = `obs-${crypto.randomUUID()}`;
  const answer = await call('GET', '/whoami', clientToken, undefined, { 'x-request-id': sent });
  expect(answer.requestId).toBe(sent);
  const unknown = await call('GET', '/no-such-route', clientToken, undefined, { 'x-request-id': `${sent} with spaces` });
  await expect
    .poll(() => logLines().filter((line) => line.message === 'Request handled' && line.routeKey === '$default').length)
    .toBeGreaterThan(0);
  expect(logLines().filter((line) => line.requestId === sent)).toEqual([
    expect.objectContaining({ message: 'Request handled', routeKey: 'GET /whoami', gatewayRequestId: answer.gatewayRequestId }),
  ]);
  // Replaced: the line has the gateway's id, twice; the value sent is nowhere.
  expect(unknown.requestId).toBe(unknown.gatewayRequestId);
  expect(logLines().filter((line) => line.requestId === unknown.requestId)).toEqual([
    expect.objectContaining({ status: 404, gatewayRequestId: unknown.gatewayRequestId }),
  ]);
  expect(twin.output()).not.toContain('with spaces');
});

test('without the edge, the address logged is the connection’s, whatever CloudFront-Viewer-Address a caller sends', async () => {
  const answer = await call('GET', '/whoami', clientToken, undefined, { 'cloudfront-viewer-address': '198.51.100.77:1234' });
  expect(answer.status).toBe(200);
  await expect.poll(() => logLines().find((line) => line.requestId === answer.requestId)).toBeDefined();
  const line = logLines().find((entry) => entry.requestId === answer.requestId);
  expect(line?.viewerAddress).toMatch(/^(127\.0\.0\.1|::1|::ffff:127\.0\.0\.1)$/);
});

test('no token, secret, login token or session cookie ever reaches the logs', async () => {
  const created = await call(
    'POST',
    '/tenants',
    clientToken,
    { nome: 'Secrets', ativo: true },
    { 'idempotency-key': crypto.randomUUID() },
  );
  const tenantToken: string = created.body.data.token;
  // With no grace period: the old token is revoked at once, and its refusal logged below.
  const rotated = await call('POST', `/tenants/${created.body.data.id}/token`, clientToken, { previousValidForSeconds: 0 });
  const newTenantToken: string = rotated.body.data.token;
  const agent = await call('POST', '/tenant/agents/1/token', newTenantToken);
  const agentToken: string = agent.body.data.token;
  await call('POST', '/agent/heartbeat', agentToken);
  await call('POST', '/tenant/users', newTenantToken, { login: 'ana@secrets.io', nome: 'Ana' });
  const login = await call('POST', '/tenant/login', newTenantToken, { login: 'ana@secrets.io' });
  const landing = await getOnTenantHost(login.body.url);
  const session = cookiesOf(landing)[0]?.split('=')[1] ?? '';
  const settings = await call('PATCH', '/tenant/settings', newTenantToken, {
    alertChannels: { webhook: { url: 'http://127.0.0.1:9/hook' } },
  });
  const webhookSecret: string = settings.body.data.alertChannels.webhook.signingSecret;
  const rotatedSecret: string = (await call('POST', '/tenant/settings/webhook/secret', newTenantToken)).body.data.alertChannels
    .webhook.signingSecret;
  // Refusals log too: a wrong token and a revoked one.
  await call('GET', '/tenant', tenantToken);
  await call('GET', '/tenant', `ten_${'x'.repeat(43)}`);

  const secrets = {
    clientToken,
    tenantToken,
    newTenantToken,
    agentToken,
    loginToken: login.body.token,
    session,
    webhookSecret,
    rotatedSecret,
  };
  for (const [name, value] of Object.entries(secrets)) expect(value.length, name).toBeGreaterThan(20);
  await expect.poll(() => logLines().length).toBeGreaterThan(10);
  // The refusals were logged (so their lines were among those searched).
  await expect
    .poll(() => logLines().filter((line) => line.routeKey === 'GET /tenant' && line.status === 401).length)
    .toBeGreaterThanOrEqual(2);
  const logs = logLines()
    .map((line) => JSON.stringify(line))
    .join('\n');
  for (const [name, value] of Object.entries(secrets)) expect(logs.includes(value), `${name} in the logs`).toBe(false);
  // The secret's base64 body alone, and the token bodies without their prefix, are not there either.
  expect(logs.includes(webhookSecret.slice('whsec_'.length))).toBe(false);
  expect(logs.includes(newTenantToken.slice(4))).toBe(false);
  // Nor in anything else the twin printed: its access lines (`GET /auth/api/<login token> 302`)
  // included. The client token apart, which its start banner shows by design.
  const { clientToken: _shownAtStart, ...notShown } = secrets;
  const output = twin.output();
  expect(output).toMatch(/GET \/auth\/api\/\S+ 302/);
  for (const [name, value] of Object.entries(notShown)) expect(output.includes(value), `${name} in the output`).toBe(false);
});
