import { request as httpRequest } from 'node:http';
import { describe, expect, inject, test } from 'vitest';
import { api, expectErrorEnvelope, getOk, newClient, newTenant } from '#test/support/api.ts';
import { agentToken, eventually, publish, retailBundle } from '#test/support/templates.ts';
import { hashToken } from '#functions/core/auth/tokens.ts';

describe('authentication (spec 5)', () => {
  test('a missing token is 401 with WWW-Authenticate: Bearer', async () => {
    const answer = await api('GET', '/tenants');
    expectErrorEnvelope(answer, 401);
    expect(answer.headers.get('www-authenticate')).toBe('Bearer');
  });

  test('an unknown or malformed token is 401 with an invalid_token challenge', async () => {
    for (const authorization of ['Bearer cli_nope', 'Bearer ', 'Basic dXNlcjpwYXNz', 'cli_raw']) {
      const answer = await api('GET', '/tenants', { headers: { authorization } });
      expectErrorEnvelope(answer, 401);
      expect(answer.headers.get('www-authenticate')).toMatch(/^Bearer/);
    }
  });

  test('a client token on a tenant route, and a tenant token on a client route, are 403', async () => {
    const client = await newClient();
    const tenant = await newTenant(client.token);
    expectErrorEnvelope(await api('GET', '/tenant', { token: client.token }), 403);
    expectErrorEnvelope(await api('GET', '/tenants', { token: tenant.token }), 403);
    expectErrorEnvelope(await api('POST', '/tenants', { token: tenant.token, body: { nome: 'X', ativo: true } }), 403);
  });

  test('the Bearer scheme name is case-insensitive', async () => {
    const client = await newClient();
    for (const scheme of ['bearer', 'BEARER']) {
      expect((await api('GET', '/whoami', { headers: { authorization: `${scheme} ${client.token}` } })).status).toBe(200);
    }
  });

  test("whoami names the kind of token, its owner and the token's id (as audit records name it)", async () => {
    const client = await newClient();
    const tenant = await newTenant(client.token);
    expect((await api('GET', '/whoami', { token: client.token })).body.data).toEqual({
      kind: 'client',
      clientId: client.clientId,
      tokenId: hashToken(client.token).slice(0, 16),
    });
    expect((await api('GET', '/whoami', { token: tenant.token })).body.data).toEqual({
      kind: 'tenant',
      tenantId: tenant.id,
      tokenId: hashToken(tenant.token).slice(0, 16),
    });
  });
});

describe('request bodies', () => {
  test('malformed JSON is 400', async () => {
    const client = await newClient();
    const error = expectErrorEnvelope(
      await api('POST', '/tenants', {
        token: client.token,
        rawBody: '{"nome": "x", ',
        headers: { 'content-type': 'application/json' },
      }),
      400,
    );
    expect(error.code).toBe('malformed_json');
  });

  test('a wrong content type is 415', async () => {
    const client = await newClient();
    expectErrorEnvelope(
      await api('POST', '/tenants', {
        token: client.token,
        rawBody: 'nome=x',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
      }),
      415,
    );
  });

  test('a body over 1 MB is 413', async () => {
    const client = await newClient();
    const body = { nome: 'x'.repeat(1024 * 1024), ativo: true };
    expectErrorEnvelope(await api('POST', '/tenants', { token: client.token, body }), 413);
  });

  test('invalid UTF-8 is 400', async () => {
    const client = await newClient();
    const rawBody = Buffer.concat([Buffer.from('{"nome":"'), Buffer.from([0xff, 0xfe]), Buffer.from('","ativo":true}')]);
    expectErrorEnvelope(
      await api('POST', '/tenants', { token: client.token, rawBody, headers: { 'content-type': 'application/json' } }),
      400,
    );
  });

  test('unknown routes are 404, as API Gateway answers them', async () => {
    const answer = await api('GET', '/nothing-here');
    expect(answer.status).toBe(404);
  });

  test('a path is routed as sent: dot segments, doubled slashes and absolute forms reach no route', async () => {
    const client = await newClient();
    const tenant = await newTenant(client.token);
    const statusOf = (path: string) =>
      new Promise<number>((resolve, reject) => {
        const url = new URL(inject('twinUrl'));
        const request = httpRequest(
          { host: url.hostname, port: url.port, path, headers: { authorization: `Bearer ${tenant.token}` } },
          (response) => {
            response.resume();
            resolve(response.statusCode ?? 0);
          },
        );
        request.on('error', reject).end();
      });
    expect(await statusOf('/tenant')).toBe(200);
    for (const path of [
      '/x/../tenant',
      '/./tenant',
      '//evil.com/tenant',
      '/tenant/',
      '//tenant',
      'http://evil.com/x/../tenant',
    ]) {
      expect(await statusOf(path), path).toBe(404);
    }
    expect(await statusOf('http://evil.com/tenant'), 'absolute form, path as written').toBe(200);
  });

  test('an integer query parameter is taken only in its one canonical spelling, within range', async () => {
    const client = await newClient();
    expect((await api('GET', '/tenants?limit=5', { token: client.token })).status).toBe(200);
    for (const limit of ['0', '-1', '101', '1e2', '01', '+5', '5.0', '%205', '0x10', '', '٥']) {
      const answer = await api('GET', `/tenants?limit=${limit}`, { token: client.token });
      expect(expectErrorEnvelope(answer, 400).code, limit).toBe('invalid_query_parameter');
    }
  });
});

describe('Idempotency-Key on POST /tenants', () => {
  test('two concurrent creates with one key make one tenant and both get the same answer', async () => {
    const client = await newClient();
    const headers = { 'idempotency-key': `key-${crypto.randomUUID()}` };
    const body = { nome: 'Once', ativo: true };
    const [first, second] = await Promise.all([
      api('POST', '/tenants', { token: client.token, body, headers }),
      api('POST', '/tenants', { token: client.token, body, headers }),
    ]);
    expect(first?.status).toBe(201);
    expect(second?.status).toBe(201);
    expect(second?.body).toEqual(first?.body);
    expect((await api('GET', '/tenants', { token: client.token })).body.data).toHaveLength(1);
  });

  test('a later retry replays the first answer, token included, and is marked as a replay', async () => {
    const client = await newClient();
    const headers = { 'idempotency-key': crypto.randomUUID() };
    const first = await api('POST', '/tenants', { token: client.token, body: { nome: 'A', ativo: true }, headers });
    const retry = await api('POST', '/tenants', { token: client.token, body: { nome: 'A', ativo: true }, headers });
    expect(retry.status).toBe(201);
    expect(retry.body).toEqual(first.body);
    expect(retry.headers.get('idempotent-replayed')).toBe('true');
    expect(first.headers.get('idempotent-replayed')).toBeNull();
  });

  test('the same key with another body is 409; another client may use the same key', async () => {
    const client = await newClient();
    const other = await newClient();
    const headers = { 'idempotency-key': crypto.randomUUID() };
    await api('POST', '/tenants', { token: client.token, body: { nome: 'A', ativo: true }, headers });
    const error = expectErrorEnvelope(
      await api('POST', '/tenants', { token: client.token, body: { nome: 'B', ativo: true }, headers }),
      409,
    );
    expect(error.code).toBe('idempotency_key_reused');
    expect((await api('POST', '/tenants', { token: other.token, body: { nome: 'B', ativo: true }, headers })).status).toBe(201);
  });

  test('a retry whose JSON has its keys in another order is the same request: replayed, not refused', async () => {
    const client = await newClient();
    const headers = { 'idempotency-key': crypto.randomUUID() };
    const first = await api('POST', '/tenants', {
      token: client.token,
      rawBody: '{"nome":"A","ativo":true}',
      headers: { ...headers, 'content-type': 'application/json' },
    });
    const retry = await api('POST', '/tenants', {
      token: client.token,
      rawBody: '{ "ativo": true, "nome": "A" }',
      headers: { ...headers, 'content-type': 'application/json' },
    });
    expect(retry.status).toBe(201);
    expect(retry.headers.get('idempotent-replayed')).toBe('true');
    expect(retry.body).toEqual(first.body);
  });

  test('a refused request does not burn the key', async () => {
    const client = await newClient();
    const headers = { 'idempotency-key': crypto.randomUUID() };
    const refused = await api('POST', '/tenants', {
      token: client.token,
      body: { nome: 'A', ativo: true, templateId: 424242 },
      headers,
    });
    expect(refused.status).toBe(404);
    // Schema failures happen before the key is looked at; domain refusals release it.
    const fixed = await api('POST', '/tenants', {
      token: client.token,
      body: { nome: 'A', ativo: true, templateId: 424242 },
      headers,
    });
    expect(fixed.status).toBe(404);
    expect(fixed.headers.get('idempotent-replayed')).toBeNull();
  });
});

describe('X-Request-Id', () => {
  /** A request id of this test's own, so that nothing else can have made what carries it. */
  const fresh = () => `conv-${crypto.randomUUID()}`;

  test('a valid one is echoed on every answer, success or error, and in the envelope; API Gateway keeps its own id', async () => {
    const client = await newClient();
    const sent = (id: string) => ({ 'x-request-id': id });
    const answers = {
      200: await api('GET', '/whoami', { token: client.token, headers: sent(fresh()) }),
      400: await api('POST', '/tenants', { token: client.token, body: { nome: '' }, headers: sent(fresh()) }),
      401: await api('GET', '/tenants', { headers: sent(fresh()) }),
      404: await api('GET', '/no-such-route', { headers: sent(fresh()) }),
      405: await api('PUT', '/tenant/schedules/7/next', { headers: sent(fresh()) }),
    };
    for (const [status, answer] of Object.entries(answers)) {
      expect(answer.status).toBe(Number(status));
      const echoed = answer.headers.get('x-request-id');
      expect(echoed, status).toMatch(/^conv-/);
      expect(answer.headers.get('apigw-requestid'), status).not.toBe(echoed);
      if (answer.status >= 400) expect(answer.body.requestId, status).toBe(echoed);
    }
    // Each its own: the value sent with it.
    expect(new Set(Object.values(answers).map((answer) => answer.headers.get('x-request-id'))).size).toBe(5);
  });

  test('an invalid one is replaced by the service’s own id, never refused nor echoed', async () => {
    const client = await newClient();
    for (const invalid of ['x'.repeat(129), 'two words', '']) {
      for (const answer of [
        await api('GET', '/whoami', { token: client.token, headers: { 'x-request-id': invalid } }),
        await api('GET', '/no-such-route', { headers: { 'x-request-id': invalid } }),
      ]) {
        const echoed = answer.headers.get('x-request-id');
        expect(echoed).toBe(answer.headers.get('apigw-requestid'));
        expect(echoed).not.toBe(invalid);
        if (answer.status >= 400) expect(answer.body.requestId).toBe(echoed);
      }
    }
    expect(
      (await api('GET', '/whoami', { token: client.token, headers: { 'x-request-id': 'x'.repeat(128) } })).headers.get(
        'x-request-id',
      ),
    ).toBe('x'.repeat(128));
  });

  test('what a request makes keeps its id, and shows it when read: a delivery, a run', async () => {
    const client = await newClient();
    const templateId = await publish(client.token, retailBundle());
    const tenant = await newTenant(client.token, { templateId });
    const token = tenant.token;
    await api('PATCH', '/tenant/settings', {
      token,
      body: { alertChannels: { webhook: { url: 'https://hooks.example.com/x' } } },
    });
    const alert = await api('POST', '/tenant/alerts', { token, body: { nome: 'A', channels: { webhook: true }, content: [] } });
    const fired = fresh();
    const queued = await api('POST', `/tenant/alerts/${alert.body.data.id}/fire`, {
      token,
      body: { user: { id: 7, email: 'ana@acme.com' } },
      headers: { 'x-request-id': fired },
    });
    expect(queued.status).toBe(202);
    expect((await getOk(`/tenant/deliveries/${queued.body.data.id}`, token)).body.data.requestId).toBe(fired);
    expect((await getOk(`/tenant/alerts/${alert.body.data.id}/deliveries`, token)).body.data[0].requestId).toBe(fired);

    const agent = await agentToken(token);
    await api('POST', '/agent/heartbeat', { token: agent });
    const flowId = (await getOk('/tenant', token)).body.data.flows[0].id as number;
    const reloaded = fresh();
    const reload = await api('POST', '/tenant/templates/reload', {
      token,
      body: { items: [{ flowId, tokenId: 1, context: 'full' }] },
      headers: { 'x-request-id': reloaded },
    });
    expect(reload.body.results).toEqual([expect.objectContaining({ status: 'enqueued' })]);
    // The agent takes it, then the tenant reads it.
    const taken = await eventually(async () => (await api('POST', '/agent/heartbeat', { token: agent })).body.data.runs[0]);
    expect(taken).toMatchObject({ flowId, requestId: reloaded });
    expect((await getOk('/tenant/runs', token)).body.data).toEqual([
      expect.objectContaining({ id: taken.id, requestId: reloaded }),
    ]);
  });
});
