import { GetCommand } from '@aws-sdk/lib-dynamodb';
import { describe, expect, test } from 'vitest';
import { hashToken, parseSignedToken, signedTokenPattern } from '#functions/core/auth/tokens.ts';
import { db, tableName } from '#functions/core/store/dynamo.ts';
import { tenantDeletionRecord } from '#functions/core/store/entity-declarations.ts';
import { findTenant } from '#functions/core/tenants/tenant-repository.ts';
import { api, expectErrorEnvelope, newClient, newTenant } from '#test/support/api.ts';
import { publish } from '#test/support/templates.ts';

describe('POST /tenants (spec 4.1)', () => {
  test('creates the tenant and answers exactly {status, data:{id, nome, token, dominio, ativo}} with 201', async () => {
    const client = await newClient();
    const answer = await api('POST', '/tenants', { token: client.token, body: { nome: 'Acme Ltda', ativo: true } });
    expect(answer.status).toBe(201);
    expect(Object.keys(answer.body)).toEqual(['status', 'data']);
    expect(answer.body.status).toBe('success');
    const data = answer.body.data;
    expect(Object.keys(data).sort()).toEqual(['ativo', 'dominio', 'id', 'nome', 'token']);
    expect(data).toMatchObject({ nome: 'Acme Ltda', ativo: true });
    expect(Number.isInteger(data.id)).toBe(true);
    expect(data.dominio).toBe(`acme-ltda-${data.id}.localhost`);
    expect(data.token).toMatch(signedTokenPattern);
    expect(data.token.startsWith('ten_')).toBe(true);
    expect(parseSignedToken(data.token)?.subject).toEqual({ kind: 'tenant', clientId: client.clientId, tenantId: data.id });
    expect(answer.headers.get('cache-control')).toBe('no-store');

    const stored = await findTenant(data.id);
    expect(stored?.clientId).toBe(client.clientId);
    expect(stored?.tokenHash).toBe(hashToken(data.token));
    expect(JSON.stringify(stored)).not.toContain(data.token);
  });

  test('the tenant token opens GET /tenant, with no template, applications, desks or flows yet', async () => {
    const client = await newClient();
    const tenant = await newTenant(client.token, { nome: 'Beta', ativo: false });
    const answer = await api('GET', '/tenant', { token: tenant.token });
    expect(answer.status).toBe(200);
    expect(answer.body).toEqual({
      status: 'success',
      data: {
        id: tenant.id,
        nome: 'Beta',
        dominio: tenant.dominio,
        ativo: false,
        pendingTemplateId: null,
        template: null,
        schedulingGranularity: 'hours',
        applications: [],
        desks: [],
        flows: [],
      },
    });
  });

  test('ids are distinct integers and domains are unique', async () => {
    const client = await newClient();
    const created = await Promise.all(Array.from({ length: 8 }, () => newTenant(client.token, { nome: 'Same Name' })));
    expect(new Set(created.map((tenant) => tenant.id)).size).toBe(8);
    expect(new Set(created.map((tenant) => tenant.dominio)).size).toBe(8);
  });

  test('both development_variables formats are stored as one object', async () => {
    const client = await newClient();
    const fromObject = await newTenant(client.token, { development_variables: { HOST: 'db', PORT: 5432 } });
    const fromArray = await newTenant(client.token, {
      development_variables: [
        { key: 'HOST', value: 'db' },
        { key: 'PORT', value: 5432 },
      ],
    });
    expect((await findTenant(fromObject.id))?.developmentVariables).toEqual({ HOST: 'db', PORT: 5432 });
    expect((await findTenant(fromArray.id))?.developmentVariables).toEqual({ HOST: 'db', PORT: 5432 });
  });

  test.each([
    ['a string', 'HOST=db'],
    [
      'a duplicate key',
      [
        { key: 'A', value: 1 },
        { key: 'A', value: 2 },
      ],
    ],
    ['a nested value', { A: { B: 1 } }],
    ['an item without a key', [{ value: 1 }]],
  ])(
    'malformed development_variables (%s) is 400 "Invalid development_variables format..." and creates nothing',
    async (_name, value) => {
      const client = await newClient();
      const body = expectErrorEnvelope(
        await api('POST', '/tenants', { token: client.token, body: { nome: 'X', ativo: true, development_variables: value } }),
        400,
      );
      expect(body.message.startsWith('Invalid development_variables format')).toBe(true);
      expect((await api('GET', '/tenants', { token: client.token })).body.data).toEqual([]);
    },
  );

  test('nome must be a non-empty string and ativo a boolean; unknown fields are refused', async () => {
    const client = await newClient();
    for (const [body, pointer] of [
      [{ ativo: true }, '/nome'],
      [{ nome: '', ativo: true }, '/nome'],
      [{ nome: 5, ativo: true }, '/nome'],
      [{ nome: 'X' }, '/ativo'],
      [{ nome: 'X', ativo: 'true' }, '/ativo'],
      [{ nome: 'X', ativo: true, owner: 'me' }, '/owner'],
      [{ nome: 'X', ativo: true, templateId: '1' }, '/templateId'],
    ] as const) {
      const error = expectErrorEnvelope(await api('POST', '/tenants', { token: client.token, body }), 400);
      expect(error.errors.map((field: { pointer: string }) => field.pointer)).toContain(pointer);
    }
  });

  test('templateId must be a template of this client, else 404 Template not found', async () => {
    const client = await newClient();
    const other = await newClient();
    const own = await publish(client.token, { nome: 'Own' });
    const foreign = await publish(other.token, { nome: 'Foreign' });

    const withOwn = await api('POST', '/tenants', { token: client.token, body: { nome: 'T', ativo: true, templateId: own } });
    expect(withOwn.status).toBe(201);
    expect((await findTenant(withOwn.body.data.id))?.templateId).toBe(own);

    for (const templateId of [foreign, 999999]) {
      const error = expectErrorEnvelope(
        await api('POST', '/tenants', { token: client.token, body: { nome: 'T', ativo: true, templateId } }),
        404,
      );
      expect(error.message).toBe('Template not found');
    }
  });
});

describe('GET /tenants', () => {
  test("lists only the client's live tenants, paginated with a cursor", async () => {
    const client = await newClient();
    const other = await newClient();
    const mine = [];
    for (let index = 0; index < 5; index++) mine.push(await newTenant(client.token, { nome: `T${index}` }));
    await newTenant(other.token);
    await api('POST', '/tenants/delete', { token: client.token, body: { id: mine[1]?.id } });

    const seen = [];
    let cursor: string | null = null;
    do {
      const query: string = cursor ? `?limit=2&cursor=${encodeURIComponent(cursor)}` : '?limit=2';
      const page = await api('GET', `/tenants${query}`, { token: client.token });
      expect(page.status).toBe(200);
      expect(page.body.data.length).toBeLessThanOrEqual(2);
      seen.push(...page.body.data);
      cursor = page.body.nextCursor;
    } while (cursor);
    const expected = mine
      .filter((_, index) => index !== 1)
      .map(({ id, nome, dominio, ativo }) => ({ id, nome, dominio, ativo, pendingTemplateId: null }));
    expect(seen).toEqual(expected);
  });

  test('bad limit or a foreign cursor is 400', async () => {
    const client = await newClient();
    const other = await newClient();
    for (const limit of ['0', '101', 'abc', '-1', '1.5']) {
      expectErrorEnvelope(await api('GET', `/tenants?limit=${limit}`, { token: client.token }), 400);
    }
    await newTenant(other.token);
    await newTenant(other.token);
    const otherPage = await api('GET', '/tenants?limit=1', { token: other.token });
    const foreign = otherPage.body.nextCursor as string;
    expect(foreign).toBeTruthy();
    expectErrorEnvelope(await api('GET', `/tenants?cursor=${foreign}`, { token: client.token }), 400);
    expectErrorEnvelope(await api('GET', '/tenants?cursor=not-a-cursor', { token: client.token }), 400);
  });
});

describe('deleting a tenant (spec 4.3)', () => {
  test.each([
    ['POST', '/tenants/delete'],
    ['DELETE', '/tenants'],
  ])('%s %s soft-deletes, answers its token 404 Tenant not found at once, and keeps a billing record', async (method, path) => {
    const client = await newClient();
    const tenant = await newTenant(client.token);
    const answer = await api(method, path, { token: client.token, body: { id: tenant.id } });
    expect(answer.status).toBe(200);
    expect(answer.body).toEqual({ status: 'success', data: true });

    expect(expectErrorEnvelope(await api('GET', '/tenant', { token: tenant.token }), 404).message).toBe('Tenant not found');
    const stored = await findTenant(tenant.id);
    expect(stored?.deletedAt).toBeTruthy();
    const billing = await db().send(
      new GetCommand({ TableName: tableName(), Key: tenantDeletionRecord.key({ tenantId: tenant.id }) }),
    );
    expect(billing.Item).toMatchObject({ tenantId: tenant.id, clientId: client.clientId, deletedAt: stored?.deletedAt });

    const again = expectErrorEnvelope(await api(method, path, { token: client.token, body: { id: tenant.id } }), 404);
    expect(again.message).toBe('Tenant not found');
  });

  test("another client's tenant and an unknown one are 404 Tenant not found, and stay untouched", async () => {
    const client = await newClient();
    const intruder = await newClient();
    const tenant = await newTenant(client.token);
    for (const id of [tenant.id, 987654321]) {
      const error = expectErrorEnvelope(await api('POST', '/tenants/delete', { token: intruder.token, body: { id } }), 404);
      expect(error.message).toBe('Tenant not found');
    }
    expect((await api('GET', '/tenant', { token: tenant.token })).status).toBe(200);
  });

  test('the body must be {id: positive integer}', async () => {
    const client = await newClient();
    for (const body of [{}, { id: '1' }, { id: 0 }, { id: 1, force: true }]) {
      expectErrorEnvelope(await api('DELETE', '/tenants', { token: client.token, body }), 400);
    }
    expectErrorEnvelope(await api('DELETE', '/tenants', { token: client.token }), 400);
  });
});

describe('activation and token rotation', () => {
  test('deactivate and activate flip ativo; the token keeps reading', async () => {
    const client = await newClient();
    const tenant = await newTenant(client.token);
    const off = await api('POST', `/tenants/${tenant.id}/deactivate`, { token: client.token });
    expect(off.body).toEqual({
      status: 'success',
      data: { id: tenant.id, nome: tenant.nome, dominio: tenant.dominio, ativo: false, pendingTemplateId: null },
    });
    expect((await api('GET', '/tenant', { token: tenant.token })).body.data.ativo).toBe(false);
    const on = await api('POST', `/tenants/${tenant.id}/activate`, { token: client.token });
    expect(on.body.data.ativo).toBe(true);
    expect((await api('GET', '/tenants', { token: client.token })).body.data[0].ativo).toBe(true);
  });

  test('rotation with previousValidForSeconds 0 returns a new token once; the old one is 401 at once', async () => {
    const client = await newClient();
    const tenant = await newTenant(client.token);
    const rotated = await api('POST', `/tenants/${tenant.id}/token`, {
      token: client.token,
      body: { previousValidForSeconds: 0 },
    });
    expect(rotated.status).toBe(200);
    expect(rotated.body.data).toEqual({ id: tenant.id, token: expect.any(String), previousExpiresAt: null });
    expect(rotated.body.data.token).not.toBe(tenant.token);
    expectErrorEnvelope(await api('GET', '/tenant', { token: tenant.token }), 401);
    expect((await api('GET', '/tenant', { token: rotated.body.data.token })).status).toBe(200);
    expect((await api('GET', `/tenants/${tenant.id}`, { token: client.token })).body.data.previousToken).toBeNull();
  });

  test('rotation without a body keeps the previous token for a day, shows when each token was used, and ends it on request', async () => {
    const client = await newClient();
    const tenant = await newTenant(client.token);
    await api('GET', '/tenant', { token: tenant.token });
    const before = Date.now();
    const rotated = await api('POST', `/tenants/${tenant.id}/token`, { token: client.token });
    const after = Date.now();
    expect(rotated.status).toBe(200);
    const { token, previousExpiresAt } = rotated.body.data as { token: string; previousExpiresAt: string };
    // The rotation's second, plus a day.
    expect(Date.parse(previousExpiresAt)).toBeGreaterThanOrEqual(Math.floor(before / 1000) * 1000 + 86_400_000);
    expect(Date.parse(previousExpiresAt)).toBeLessThanOrEqual(after + 86_400_000);
    // Both work, the previous one like the current one.
    expect((await api('GET', '/tenant', { token: tenant.token })).body.data.id).toBe(tenant.id);
    const detail = (await api('GET', `/tenants/${tenant.id}`, { token: client.token })).body.data;
    expect(detail.currentToken).toEqual({ lastUsedAt: null });
    expect(detail.previousToken).toEqual({ expiresAt: previousExpiresAt, lastUsedAt: expect.any(String) });
    expect((await api('GET', '/tenant', { token })).status).toBe(200);
    const used = (await api('GET', `/tenants/${tenant.id}`, { token: client.token })).body.data;
    expect(used.currentToken.lastUsedAt).toEqual(expect.any(String));
    // Both only as hashes.
    const record = await findTenant(tenant.id);
    expect(record).toMatchObject({ tokenHash: hashToken(token), previousTokenHash: hashToken(tenant.token) });
    for (const shown of [token, tenant.token]) expect(JSON.stringify(record)).not.toContain(shown);

    const ended = await api('DELETE', `/tenants/${tenant.id}/token/previous`, { token: client.token });
    expect(ended.body).toEqual({ status: 'success', data: { id: tenant.id, ended: true } });
    expectErrorEnvelope(await api('GET', '/tenant', { token: tenant.token }), 401);
    expect((await api('GET', '/tenant', { token })).status).toBe(200);
    expect((await api('GET', `/tenants/${tenant.id}`, { token: client.token })).body.data.previousToken).toBeNull();
    // Again: nothing left to end, and no error.
    const again = await api('DELETE', `/tenants/${tenant.id}/token/previous`, { token: client.token });
    expect(again.body).toEqual({ status: 'success', data: { id: tenant.id, ended: false } });
    expect((await api('GET', '/tenant', { token })).status).toBe(200);
  });

  test('a second rotation within the grace period ends the first previous token: at most two tokens work', async () => {
    const client = await newClient();
    const tenant = await newTenant(client.token);
    const first = (await api('POST', `/tenants/${tenant.id}/token`, { token: client.token, body: {} })).body.data;
    const second = (
      await api('POST', `/tenants/${tenant.id}/token`, { token: client.token, body: { previousValidForSeconds: 60 } })
    ).body.data;
    expectErrorEnvelope(await api('GET', '/tenant', { token: tenant.token }), 401);
    expect((await api('GET', '/tenant', { token: first.token })).status).toBe(200);
    expect((await api('GET', '/tenant', { token: second.token })).status).toBe(200);
    const detail = (await api('GET', `/tenants/${tenant.id}`, { token: client.token })).body.data;
    expect(detail.previousToken.expiresAt).toBe(second.previousExpiresAt);
    // Out of bounds: refused, nothing rotated.
    for (const previousValidForSeconds of [604_801, -1, 1.5, '60']) {
      const refused = await api('POST', `/tenants/${tenant.id}/token`, {
        token: client.token,
        body: { previousValidForSeconds },
      });
      expect(expectErrorEnvelope(refused, 400).code).toBe('validation_failed');
    }
    expect((await api('GET', '/tenant', { token: second.token })).status).toBe(200);
  });

  test('concurrent rotations leave exactly one working token with no grace, and two with one', async () => {
    for (const [body, live] of [
      [{ previousValidForSeconds: 0 }, 1],
      [undefined, 2],
    ] as const) {
      const client = await newClient();
      const tenant = await newTenant(client.token);
      const answers = await Promise.all(
        Array.from({ length: 4 }, () => api('POST', `/tenants/${tenant.id}/token`, { token: client.token, body })),
      );
      const tokens = answers.filter((answer) => answer.status === 200).map((answer) => answer.body.data.token as string);
      const working = [];
      for (const token of [tenant.token, ...tokens]) {
        if ((await api('GET', '/tenant', { token })).status === 200) working.push(token);
      }
      expect(working, JSON.stringify(body)).toHaveLength(live);
    }
  });

  test("a deactivated tenant's previous token reads and is refused exactly as its current one", async () => {
    const client = await newClient();
    const tenant = await newTenant(client.token);
    const { token } = (await api('POST', `/tenants/${tenant.id}/token`, { token: client.token })).body.data;
    await api('POST', '/tenant/users', { token, body: { login: 'ana@x.io', nome: 'Ana' } });
    await api('POST', `/tenants/${tenant.id}/deactivate`, { token: client.token });
    for (const each of [tenant.token, token]) {
      expect((await api('GET', '/tenant', { token: each })).body.data.ativo).toBe(false);
      const login = await api('POST', '/tenant/login', { token: each, body: { login: 'ana@x.io' } });
      expect(expectErrorEnvelope(login, 409).code).toBe('tenant_inactive');
    }
  });

  test("a deleted tenant's tokens open nothing: the current one is 404 Tenant not found, the previous one 401", async () => {
    const client = await newClient();
    const tenant = await newTenant(client.token);
    const { token } = (await api('POST', `/tenants/${tenant.id}/token`, { token: client.token })).body.data;
    expect((await api('DELETE', '/tenants', { token: client.token, body: { id: tenant.id } })).status).toBe(200);
    expect(expectErrorEnvelope(await api('GET', '/tenant', { token }), 404).message).toBe('Tenant not found');
    expectErrorEnvelope(await api('GET', '/tenant', { token: tenant.token }), 401);
    expectErrorEnvelope(await api('DELETE', `/tenants/${tenant.id}/token/previous`, { token: client.token }), 404);
  });

  test('another client cannot deactivate, activate or rotate a tenant; a deleted one is gone for everyone', async () => {
    const client = await newClient();
    const intruder = await newClient();
    const tenant = await newTenant(client.token);
    for (const action of ['deactivate', 'activate', 'token']) {
      expectErrorEnvelope(await api('POST', `/tenants/${tenant.id}/${action}`, { token: intruder.token }), 404);
    }
    expectErrorEnvelope(await api('DELETE', `/tenants/${tenant.id}/token/previous`, { token: intruder.token }), 404);
    expect((await api('GET', '/tenant', { token: tenant.token })).body.data.ativo).toBe(true);
    await api('DELETE', '/tenants', { token: client.token, body: { id: tenant.id } });
    for (const action of ['deactivate', 'activate', 'token']) {
      expectErrorEnvelope(await api('POST', `/tenants/${tenant.id}/${action}`, { token: client.token }), 404);
    }
  });

  test('a path id that is not a positive integer is 400', async () => {
    const client = await newClient();
    for (const id of ['abc', '0', '01', '1e3', '99999999999999999999']) {
      expectErrorEnvelope(await api('POST', `/tenants/${id}/deactivate`, { token: client.token }), 400);
    }
  });
});
