/**
 * The spec to the letter, and the API an integrator expects around it (issue 22), over real HTTP:
 * a deleted tenant's token, the router's own answers (404, 405, unknown query parameters), a
 * token of the wrong kind, the reads and changes of one tenant, datamart, group and template, and
 * template names that cannot repeat.
 */
import { describe, expect, test } from 'vitest';
import { routeKey, routes } from '#functions/routes.ts';
import { api, expectErrorEnvelope, newClient, newTenant } from '#test/support/api.ts';
import { publish, retailBundle } from '#test/support/templates.ts';

const json = (token: string, body?: unknown, headers?: Record<string, string>) => ({ token, body, headers });

describe("a deleted tenant's token (spec 4.4, 7)", () => {
  test('every tenant route answers 404 Tenant not found, and never data', async () => {
    const client = await newClient();
    const tenant = await newTenant(client.token);
    await api('POST', '/tenants/delete', json(client.token, { id: tenant.id }));
    const tenantRoutes = routes.filter((route) => route.auth.includes('tenant'));
    expect(tenantRoutes.length).toBeGreaterThan(40);
    for (const route of tenantRoutes) {
      const path = route.path.replace(/\{\w+\}/g, '1');
      const answer = await api(route.method, path, { token: tenant.token, body: route.body ? {} : undefined });
      const error = expectErrorEnvelope(answer, 404);
      expect(error.message, routeKey(route)).toBe('Tenant not found');
    }
  });
});

describe("the router's own answers", () => {
  test('a path no route has is 404, a path other methods take is 405 with Allow, both in the error envelope', async () => {
    expect(expectErrorEnvelope(await api('GET', '/no/such/path'), 404).code).toBe('route_not_found');
    const notAllowed = await api('PATCH', '/tenants');
    expect(expectErrorEnvelope(notAllowed, 405).code).toBe('method_not_allowed');
    expect(notAllowed.headers.get('allow')).toBe('POST, GET, DELETE');
    expect((await api('DELETE', '/tenant/schedules/7')).status).not.toBe(405);
    expect((await api('PUT', '/tenant/schedules/7/next')).headers.get('allow')).toBe('GET');
  });

  test('a query parameter the route does not declare is 400 naming it', async () => {
    const client = await newClient();
    // A filter misspelled (the list takes `nome`): refused, never ignored.
    const answer = await api('GET', '/tenants?name=x&limit=5', { token: client.token });
    const error = expectErrorEnvelope(answer, 400);
    expect(error).toMatchObject({ code: 'unknown_query_parameter', errors: [{ location: 'query', pointer: '/name' }] });
    expect(error.message).toContain('"name"');
    expect((await api('GET', '/tenants?limit=5', { token: client.token })).status).toBe(200);
  });

  test('a valid token of the wrong kind is 403 naming the scheme the route needs', async () => {
    const client = await newClient();
    const tenant = await newTenant(client.token);
    const onTenantRoute = expectErrorEnvelope(await api('GET', '/tenant', { token: client.token }), 403);
    expect(onTenantRoute).toMatchObject({ code: 'wrong_token_kind' });
    expect(onTenantRoute.message).toContain('tenantBearerAuth');
    const onClientRoute = expectErrorEnvelope(await api('GET', '/tenants', { token: tenant.token }), 403);
    expect(onClientRoute.message).toContain('clientBearerAuth');
    expectErrorEnvelope(await api('GET', '/tenant', { token: 'ten_not-a-token' }), 401);
  });
});

describe('one tenant, read and changed by its client', () => {
  test('GET /tenants/{id} shows its development_variables, template, state and dates, with an ETag', async () => {
    const client = await newClient();
    const templateId = await publish(client.token, retailBundle());
    const tenant = await newTenant(client.token, { templateId, development_variables: [{ key: 'A', value: 1 }] });
    const answer = await api('GET', `/tenants/${tenant.id}`, { token: client.token });
    expect(answer.body.data).toMatchObject({
      id: tenant.id,
      nome: 'Acme',
      dominio: tenant.dominio,
      ativo: true,
      pendingTemplateId: null,
      development_variables: { A: 1 },
      template: { id: templateId, version: 1 },
      schedulingGranularity: 'hours',
      createdAt: expect.any(String),
      updatedAt: expect.any(String),
    });
    expect(answer.headers.get('etag')).toMatch(/^".+"$/);
    expectErrorEnvelope(await api('GET', `/tenants/${tenant.id}`, { token: (await newClient()).token }), 404);
  });

  test('PATCH takes nome and development_variables (either format, the creation messages) and honours If-Match', async () => {
    const client = await newClient();
    const tenant = await newTenant(client.token);
    const etag = (await api('GET', `/tenants/${tenant.id}`, { token: client.token })).headers.get('etag') as string;
    const changed = await api(
      'PATCH',
      `/tenants/${tenant.id}`,
      json(client.token, { nome: 'Acme Two', development_variables: [{ key: 'HOST', value: 'db' }] }, { 'if-match': etag }),
    );
    expect(changed.status).toBe(200);
    expect(changed.body.data).toMatchObject({ nome: 'Acme Two', dominio: tenant.dominio, development_variables: { HOST: 'db' } });
    expect(changed.headers.get('etag')).not.toBe(etag);
    // The ETag read before the change no longer matches.
    const stale = await api('PATCH', `/tenants/${tenant.id}`, json(client.token, { nome: 'Late' }, { 'if-match': etag }));
    expect(expectErrorEnvelope(stale, 412).code).toBe('version_mismatch');
    const invalid = expectErrorEnvelope(
      await api('PATCH', `/tenants/${tenant.id}`, json(client.token, { development_variables: [{ key: 'A' }] })),
      400,
    );
    expect(invalid.message).toMatch(/^Invalid development_variables format/);
    const duplicate = expectErrorEnvelope(
      await api(
        'PATCH',
        `/tenants/${tenant.id}`,
        json(client.token, {
          development_variables: [
            { key: 'A', value: 1 },
            { key: 'A', value: 2 },
          ],
        }),
      ),
      400,
    );
    expect(duplicate.message).toMatch(/^Invalid development_variables format: duplicate key/);
    expectErrorEnvelope(await api('PATCH', `/tenants/${tenant.id}`, json(client.token, {})), 400);
  });
});

describe('one datamart, one group', () => {
  test('GET /tenant/datamart/{id} is the datamart as spec 2.3 shows it; GET /tenant/groups/{id} the group with its members', async () => {
    const client = await newClient();
    const templateId = await publish(client.token, retailBundle());
    const tenant = await newTenant(client.token, { templateId });
    const token = tenant.token;
    const tables = (await api('GET', '/tenant', { token })).body.data.desks[0].tables.map((table: { id: number }) => table.id);
    const user = (await api('POST', '/tenant/users', json(token, { login: 'ana@x.io', nome: 'Ana' }))).body.data.id;
    const created = await api('POST', '/tenant/datamart', json(token, { nome: 'Sales', tables, owners: [user] }));
    const one = await api('GET', `/tenant/datamart/${created.body.data.id}`, { token });
    expect(one.body).toEqual({ status: 'success', data: created.body.data });
    expectErrorEnvelope(await api('GET', `/tenant/datamart/${created.body.data.id + 1}`, { token }), 404);

    const group = (await api('POST', '/tenant/groups', json(token, { nome: 'Ops' }))).body.data.id;
    await api('PUT', `/tenant/groups/${group}/members/${user}`, { token });
    expect((await api('GET', `/tenant/groups/${group}`, { token })).body.data).toEqual({
      id: group,
      nome: 'Ops',
      members: [user],
    });
    expectErrorEnvelope(await api('GET', `/tenant/groups/${group + 1}`, { token }), 404);
  });
});

describe('templates: names that do not repeat, and deletion', () => {
  test("publishing a name the client already has is 409 naming that template; another client's is no matter", async () => {
    const client = await newClient();
    const first = await publish(client.token, { nome: 'Retail' });
    const again = expectErrorEnvelope(await api('POST', '/tenants/templates', json(client.token, { nome: ' RETAIL ' })), 409);
    expect(again).toMatchObject({ code: 'template_name_taken', errors: [{ pointer: '/nome' }] });
    expect(again.message).toContain(`id ${first}`);
    await publish((await newClient()).token, { nome: 'Retail' });
    // A new version may keep its name, or take a free one; not another template's.
    const second = await publish(client.token, { nome: 'Stock' });
    expectErrorEnvelope(await api('PUT', `/tenants/templates/${second}`, json(client.token, { nome: 'retail' })), 409);
    expect((await api('PUT', `/tenants/templates/${second}`, json(client.token, { nome: 'Stock 2' }))).status).toBe(200);
    expect((await api('POST', '/tenants/templates', json(client.token, { nome: 'Stock' }))).status).toBe(201);
  });

  test('DELETE is 409 while the template is the default; tenants keep what it applied; If-Match guards the version', async () => {
    const client = await newClient();
    const templateId = await publish(client.token, retailBundle());
    const tenant = await newTenant(client.token, { templateId });
    await api('PUT', '/tenants/templates/default', json(client.token, { templateId }));
    const refused = expectErrorEnvelope(await api('DELETE', `/tenants/templates/${templateId}`, { token: client.token }), 409);
    expect(refused.code).toBe('template_is_default');
    await api('PUT', '/tenants/templates/default', json(client.token, { templateId: null }));

    const etag = (await api('GET', `/tenants/templates/${templateId}`, { token: client.token })).headers.get('etag') as string;
    await api('PUT', `/tenants/templates/${templateId}`, json(client.token, { ...retailBundle(), nome: 'Retail v2' }));
    const stale = await api('DELETE', `/tenants/templates/${templateId}`, { token: client.token, headers: { 'if-match': etag } });
    expect(expectErrorEnvelope(stale, 412).code).toBe('version_mismatch');

    expect((await api('DELETE', `/tenants/templates/${templateId}`, { token: client.token })).status).toBe(200);
    expectErrorEnvelope(await api('GET', `/tenants/templates/${templateId}`, { token: client.token }), 404);
    expect((await api('GET', '/tenants/templates', { token: client.token })).body.data).toEqual([]);
    const own = (await api('GET', '/tenant', { token: tenant.token })).body.data;
    expect(own.flows).toHaveLength(3);
    // Its name is free again.
    expect((await api('POST', '/tenants/templates', json(client.token, { nome: 'Retail v2' }))).status).toBe(201);
  });
});

describe('schedules (spec 2.7, 8)', () => {
  test('an Hour period longer than its window is any integer >= 1: it fires once a window', async () => {
    const client = await newClient();
    const templateId = await publish(client.token, retailBundle());
    const tenant = await newTenant(client.token, { templateId });
    const flow = (await api('GET', '/tenant', { token: tenant.token })).body.data.flows[0].id;
    const file = {
      header: { id: 4 },
      body: {
        nome: 'Once a window',
        ativo: true,
        timezone: 'UTC',
        flows: [{ flow_etl_id: flow, context: 'full' }],
        triggers: [{ type: 'Hour', period: 5000, start_when: '2020-01-01T00:00:00Z', start_time: '08:00', end_time: '18:00' }],
      },
    };
    expect((await api('PUT', '/tenant/schedules/4', json(tenant.token, file))).status).toBe(201);
    const next = (await api('GET', '/tenant/schedules/4/next?count=3', { token: tenant.token })).body.data;
    const times = next.fires.map((fire: { utc: string }) => fire.utc.slice(11, 16));
    expect(times).toEqual(['08:00', '08:00', '08:00']);
  });

  test('a schedule read back keeps the file order: fileName, header, body; the body in the spec order, extras after', async () => {
    const client = await newClient();
    const templateId = await publish(client.token, retailBundle());
    const tenant = await newTenant(client.token, { templateId });
    const flow = (await api('GET', '/tenant', { token: tenant.token })).body.data.flows[0].id;
    const file = {
      body: {
        zeta: 'extra',
        tags: ['a'],
        triggers: [{ start_when: '06:30', type: 'Day' }],
        flows: [{ context: 'full', flow_etl_id: flow }],
        timezone: 'UTC',
        ativo: false,
        nome: 'Ordered',
      },
      header: { kind: 'schedule', id: 6 },
      fileName: 'ordered.yaml',
    };
    await api('PUT', '/tenant/schedules/6', json(tenant.token, file));
    const yaml = (await api('GET', '/tenant/schedules/6', { token: tenant.token, headers: { accept: 'application/yaml' } })).body;
    const keyLines = (yaml as string).split('\n').filter((line) => /^ {0,2}[a-zA-Z_]+:/.test(line));
    expect(keyLines.map((line) => line.trim().split(':')[0])).toEqual([
      'fileName',
      'header',
      'id',
      'kind',
      'body',
      'nome',
      'ativo',
      'timezone',
      'version',
      'flows',
      'triggers',
      'tags',
      'createdAt',
      'createdBy',
      'updatedAt',
      'updatedBy',
      'zeta',
    ]);
  });
});
