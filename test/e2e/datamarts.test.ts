import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import { describe, expect, test } from 'vitest';
import datamartSchema from '#schemas/responses/datamart.schema.json' with { type: 'json' };
import groupPermissionSchema from '#schemas/responses/group-permission.schema.json' with { type: 'json' };
import userPermissionSchema from '#schemas/responses/user-permission.schema.json' with { type: 'json' };
import { api, expectErrorEnvelope, newClient, newTenant } from '#test/support/api.ts';
import { publish, retailBundle } from '#test/support/templates.ts';
import { tablePermission } from '#test/support/permissions.ts';

const ajv = new Ajv2020({ strict: true, allErrors: true });
addFormats(ajv);
const matches = (schema: object) => {
  const validate = ajv.compile(schema);
  return (value: unknown) => {
    if (!validate(value)) throw new Error(`${JSON.stringify(value)} breaks the spec shape: ${ajv.errorsText(validate.errors)}`);
  };
};
const isDatamart = matches(datamartSchema);
const isUserPermission = matches(userPermissionSchema);
const isGroupPermission = matches(groupPermissionSchema);

const json = (token: string, body: unknown) => ({ token, body });

/** A tenant with the retail template applied, two users (ana in group Sales) and its table ids by key. */
async function retailTenant() {
  const client = await newClient();
  const templateId = await publish(client.token, retailBundle());
  const tenant = await newTenant(client.token, { templateId });
  const own = (await api('GET', '/tenant', { token: tenant.token })).body.data;
  const tables = Object.fromEntries(own.desks[0].tables.map((table: { key: string; id: number }) => [table.key, table.id])) as {
    orders: number;
    daily: number;
    stock: number;
  };
  const ana = (await api('POST', '/tenant/users', json(tenant.token, { login: 'ana@acme.com', nome: 'Ana' }))).body.data;
  const bia = (await api('POST', '/tenant/users', json(tenant.token, { login: 'bia@acme.com', nome: 'Bia' }))).body.data;
  const sales = (await api('POST', '/tenant/groups', json(tenant.token, { nome: 'Sales' }))).body.data;
  await api('PUT', `/tenant/groups/${sales.id}/members/${ana.id}`, { token: tenant.token });
  return { client, tenant, tables, ana, bia, sales };
}

describe('datamarts (spec 2.3, 4.7)', () => {
  test('created over template tables with owners; GET /tenant/datamart answers exactly the spec shape', async () => {
    const { tenant, tables, ana } = await retailTenant();
    const created = await api(
      'POST',
      '/tenant/datamart',
      json(tenant.token, { nome: 'Vendas', tables: [tables.orders, tables.daily], owners: [ana.id] }),
    );
    expect(created.status).toBe(201);
    isDatamart(created.body.data);
    // A table may be in several datamarts.
    await api(
      'POST',
      '/tenant/datamart',
      json(tenant.token, { nome: 'Estoque', tables: [tables.stock, tables.orders], owners: [] }),
    );

    const listed = await api('GET', '/tenant/datamart', { token: tenant.token });
    expect(Object.keys(listed.body).sort()).toEqual(['data', 'status']);
    expect(listed.body.status).toBe('success');
    listed.body.data.forEach(isDatamart);
    const [vendas, estoque] = listed.body.data;
    expect(vendas).toMatchObject({
      nome: 'Vendas',
      owners: [{ userId: ana.id, user: { id: ana.id, nome: 'Ana', login: 'ana@acme.com' } }],
    });
    expect(vendas.dm_tables.map((entry: { tableId: number }) => entry.tableId)).toEqual([tables.orders, tables.daily]);
    expect(vendas.dm_tables[0].table.columns).toEqual([
      { id: expect.any(Number), column_name: 'order_id', data_type: 'integer', label: 'Order' },
      { id: expect.any(Number), column_name: 'total', data_type: 'decimal(12,2)', label: 'Total' },
    ]);
    expect(estoque.dm_tables.map((entry: { tableId: number }) => entry.tableId).sort()).toEqual(
      [tables.orders, tables.stock].sort(),
    );
  });

  test('tables and owners must be the tenant’s: 400 naming every bad id; PATCH replaces; DELETE removes', async () => {
    const { tenant, tables, ana, bia } = await retailTenant();
    const error = expectErrorEnvelope(
      await api(
        'POST',
        '/tenant/datamart',
        json(tenant.token, { nome: 'X', tables: [tables.orders, 999999], owners: [ana.id, 888888] }),
      ),
      400,
    );
    expect(error.errors.map((field: { pointer: string }) => field.pointer)).toEqual(['/tables/1', '/owners/1']);
    const id = (
      await api('POST', '/tenant/datamart', json(tenant.token, { nome: 'X', tables: [tables.orders], owners: [ana.id] }))
    ).body.data.id;
    const patched = await api('PATCH', `/tenant/datamart/${id}`, json(tenant.token, { nome: 'Y', owners: [bia.id] }));
    expect(patched.body.data).toMatchObject({
      id,
      nome: 'Y',
      owners: [{ userId: bia.id }],
      dm_tables: [{ tableId: tables.orders }],
    });
    expect((await api('DELETE', `/tenant/datamart/${id}`, { token: tenant.token })).body).toEqual({
      status: 'success',
      data: true,
    });
    expect((await api('GET', '/tenant/datamart', { token: tenant.token })).body.data).toEqual([]);
    expectErrorEnvelope(await api('GET', `/tenant/datamart/${id}/user`, { token: tenant.token }), 404);
  });
});

describe('lists the spec shows without paging (issue 22)', () => {
  /** Every page of a list, following nextCursor. */
  async function pages(path: string, token: string, limit: number) {
    const items = [];
    let cursor: string | null = null;
    do {
      const query: string = `limit=${limit}${cursor === null ? '' : `&cursor=${encodeURIComponent(cursor)}`}`;
      const page = (await api('GET', `${path}?${query}`, { token })).body;
      expect(page.data.length).toBeLessThanOrEqual(limit);
      items.push(...page.data);
      cursor = page.nextCursor;
    } while (cursor !== null);
    return items;
  }

  test('datamarts, users and a datamart’s records: every one without limit (52 of 52), pages with it', async () => {
    const { tenant, tables, ana, sales } = await retailTenant();
    const token = tenant.token;
    const users = [ana.id];
    for (let index = 0; users.length < 52; index++) {
      users.push(
        (await api('POST', '/tenant/users', json(token, { login: `u${index}@acme.com`, nome: `U${index}` }))).body.data.id,
      );
    }
    const datamarts: number[] = [];
    while (datamarts.length < 52) {
      const body = { nome: `DM ${datamarts.length}`, tables: [tables.orders], owners: [ana.id] };
      datamarts.push((await api('POST', '/tenant/datamart', json(token, body))).body.data.id);
    }
    const [first] = datamarts;
    for (const user of users) {
      await api('PUT', `/tenant/datamart/${first}/user/${user}`, json(token, { permissions: [tablePermission(tables.orders)] }));
    }
    await api(
      'PUT',
      `/tenant/datamart/${first}/group/${sales.id}`,
      json(token, { permissions: [tablePermission(tables.orders)] }),
    );

    const lists: Array<[path: string, count: number, id: (item: Record<string, number>) => number]> = [
      ['/tenant/datamart', 52, (item) => item.id as number],
      ['/tenant/users', 53, (item) => item.id as number],
      [`/tenant/datamart/${first}/user`, 52, (item) => item.userId as number],
      [`/tenant/datamart/${first}/group`, 1, (item) => item.groupId as number],
    ];
    for (const [path, count, id] of lists) {
      const whole = await api('GET', path, { token });
      // Exactly the spec's shape: every item, no cursor to miss.
      expect(Object.keys(whole.body).sort(), path).toEqual(['data', 'status']);
      expect(whole.body.data, path).toHaveLength(count);
      const paged = await pages(path, token, 20);
      expect(paged.map(id), path).toEqual(whole.body.data.map(id));
    }
  });

  test('a whole list larger than one answer (6 MB) is a 400 that says so and names limit; its pages still read', async () => {
    const client = await newClient();
    const label = 'L'.repeat(200);
    const columns = Array.from({ length: 20 }, (_, index) => ({ column_name: `c${index}`, data_type: 'text', label }));
    const tableKeys = Array.from({ length: 150 }, (_, index) => `t${index}`);
    const templateId = await publish(client.token, {
      nome: 'Wide',
      desks: [{ key: 'd', nome: 'D' }],
      tables: tableKeys.map((key) => ({ key, nome: key, desk: 'd', columns })),
    });
    const tenant = await newTenant(client.token, { templateId });
    const own = (await api('GET', '/tenant', { token: tenant.token })).body.data;
    const tables = own.desks[0].tables.map((table: { id: number }) => table.id);
    // Each datamart shows its 150 tables with their columns: about 0.8 MB each.
    for (let index = 0; index < 9; index++) {
      const created = await api('POST', '/tenant/datamart', json(tenant.token, { nome: `Wide ${index}`, tables, owners: [] }));
      expect(created.status).toBe(201);
    }
    const whole = await api('GET', '/tenant/datamart', { token: tenant.token });
    // The status alone first: a failure must not print megabytes.
    expect(whole.status).toBe(400);
    const error = expectErrorEnvelope(whole, 400);
    expect(error.code).toBe('answer_too_large');
    expect(error.message).toMatch(/9 items.*6 MB.*send limit/);
    expect(error.errors).toEqual([expect.objectContaining({ location: 'query', pointer: '/limit' })]);
    const page = await api('GET', '/tenant/datamart?limit=2', { token: tenant.token });
    expect(page.body.data).toHaveLength(2);
    expect(page.body.nextCursor).toEqual(expect.any(String));
  });
});

describe('permissions (spec 2.4, 4.8, 4.9) and effective access', () => {
  test('user and group records with hidden columns, = and >= filters and expiry, in the spec shapes, and the effective result', async () => {
    const { tenant, tables, ana, bia, sales } = await retailTenant();
    const dm = (
      await api(
        'POST',
        '/tenant/datamart',
        json(tenant.token, { nome: 'Vendas', tables: [tables.orders, tables.daily], owners: [ana.id] }),
      )
    ).body.data;
    const later = '2030-01-01T00:00:00Z';
    const group = await api(
      'PUT',
      `/tenant/datamart/${dm.id}/group/${sales.id}`,
      json(tenant.token, {
        permissions: [
          tablePermission(tables.orders, {
            allow_export: true,
            hidden_columns: ['total'],
            filters: [{ column: 'order_id', operator: '>=', value: '1000' }],
          }),
          tablePermission(tables.daily, { expires_in: later }),
        ],
      }),
    );
    expect(group.status).toBe(200);
    await api(
      'PUT',
      `/tenant/datamart/${dm.id}/user/${bia.id}`,
      json(tenant.token, {
        permissions: [tablePermission(tables.orders, { filters: [{ column: 'order_id', operator: '=', value: '7' }] })],
      }),
    );

    const users = (await api('GET', `/tenant/datamart/${dm.id}/user`, { token: tenant.token })).body;
    expect(users.status).toBe('success');
    users.data.forEach(isUserPermission);
    expect(users.data).toEqual([
      {
        userId: bia.id,
        user: { id: bia.id, nome: 'Bia', login: 'bia@acme.com' },
        tableId: tables.orders,
        table: { id: tables.orders, nome: 'Orders' },
        allowed: true,
        allow_export: false,
        expires_in: null,
        hidden_columns: [],
        filters: [{ column: 'order_id', operator: '=', value: '7' }],
      },
    ]);
    const groups = (await api('GET', `/tenant/datamart/${dm.id}/group`, { token: tenant.token })).body.data;
    groups.forEach(isGroupPermission);
    expect(groups.map((record: { groupId: number; tableId: number }) => [record.groupId, record.tableId])).toEqual([
      [sales.id, tables.orders],
      [sales.id, tables.daily],
    ]);

    // Ana has no record of her own: her group's apply.
    const effective = (await api('GET', `/tenant/datamart/${dm.id}/user/${ana.id}/effective`, { token: tenant.token })).body.data;
    expect(effective).toEqual([
      expect.objectContaining({ tableId: Math.min(tables.orders, tables.daily) }),
      expect.objectContaining({ tableId: Math.max(tables.orders, tables.daily) }),
    ]);
    const onOrders = effective.find((entry: { tableId: number }) => entry.tableId === tables.orders);
    expect(onOrders).toMatchObject({
      allowed: true,
      allow_export: true,
      hidden_columns: ['total'],
      row_filters: [[{ column: 'order_id', operator: '>=', value: '1000' }]],
      source: 'groups',
    });
    // And the same inside GET /tenant/users, per datamart table.
    const listed = (await api('GET', '/tenant/users', { token: tenant.token })).body.data;
    const anaListed = listed.find((user: { id: number }) => user.id === ana.id);
    expect(anaListed.permissions).toContainEqual(
      expect.objectContaining({ datamartId: dm.id, tableId: tables.daily, allowed: true, expires_in: later }),
    );
    const biaListed = listed.find((user: { id: number }) => user.id === bia.id);
    expect(biaListed.permissions).toEqual([
      expect.objectContaining({ datamartId: dm.id, tableId: tables.orders, source: 'user' }),
    ]);

    // The group's records go with one DELETE, which answers what is left of them: nothing.
    const removed = await api('DELETE', `/tenant/datamart/${dm.id}/group/${sales.id}`, { token: tenant.token });
    expect(removed.body).toEqual({ status: 'success', data: [] });
    expect((await api('GET', `/tenant/datamart/${dm.id}/group`, { token: tenant.token })).body.data).toEqual([]);
  });

  test('issue 34: one group sees every order without `total`, another `total` only from order 1000: a user in both gets both grants whole, never `total` of every order', async () => {
    const { tenant, tables, ana, sales } = await retailTenant();
    const token = tenant.token;
    const totals = (await api('POST', '/tenant/groups', json(token, { nome: 'Totals' }))).body.data;
    await api('PUT', `/tenant/groups/${totals.id}/members/${ana.id}`, { token });
    const dm = (await api('POST', '/tenant/datamart', json(token, { nome: 'Vendas', tables: [tables.orders], owners: [] }))).body
      .data;
    const from1000 = { column: 'order_id', operator: '>=', value: '1000' };
    for (const [group, record] of [
      [sales.id, tablePermission(tables.orders, { hidden_columns: ['total'] })],
      [totals.id, tablePermission(tables.orders, { filters: [from1000] })],
    ] as const) {
      expect((await api('PUT', `/tenant/datamart/${dm.id}/group/${group}`, json(token, { permissions: [record] }))).status).toBe(
        200,
      );
    }

    const unrestricted = { allow_export: false, expires_in: null, hidden_columns: [], row_filters: null };
    const byGroupId = (a: { groupId: number }, b: { groupId: number }) => a.groupId - b.groupId;
    const expected = {
      tableId: tables.orders,
      allowed: true,
      allow_export: false,
      expires_in: null,
      // The flat fields: every order, but `total` of none (the widest single policy no wider than either grant).
      hidden_columns: ['total'],
      row_filters: null,
      source: 'groups',
      // `total` only through Totals' grant, so only from order 1000 on.
      grants: [
        { source: 'group', groupId: sales.id, ...unrestricted, hidden_columns: ['total'] },
        { source: 'group', groupId: totals.id, ...unrestricted, row_filters: [[from1000]] },
      ].sort(byGroupId),
    };
    const effective = await api('GET', `/tenant/datamart/${dm.id}/user/${ana.id}/effective`, { token });
    expect(effective.status).toBe(200);
    expect(effective.body.data).toEqual([expected]);
    // The same inside GET /tenant/users/{id} and GET /tenant/users, with the datamart's id.
    const one = (await api('GET', `/tenant/users/${ana.id}`, { token })).body.data;
    expect(one.permissions).toEqual([{ datamartId: dm.id, ...expected }]);
    const listed = (await api('GET', '/tenant/users', { token })).body.data;
    expect(listed.find((user: { id: number }) => user.id === ana.id).permissions).toEqual([{ datamartId: dm.id, ...expected }]);
  });

  test('every invalid permission is a 400 naming the field; another tenant’s subjects are 404', async () => {
    const { tenant, tables, ana } = await retailTenant();
    const other = await retailTenant();
    const dm = (await api('POST', '/tenant/datamart', json(tenant.token, { nome: 'V', tables: [tables.orders], owners: [] })))
      .body.data;
    const put = (permissions: unknown[]) =>
      api('PUT', `/tenant/datamart/${dm.id}/user/${ana.id}`, json(tenant.token, { permissions }));
    const pointers = async (permissions: unknown[]) =>
      expectErrorEnvelope(await put(permissions), 400).errors.map((field: { pointer: string }) => field.pointer);
    expect(await pointers([tablePermission(tables.daily)])).toEqual(['/permissions/0/tableId']);
    expect(await pointers([tablePermission(tables.orders, { hidden_columns: ['nope'] })])).toEqual([
      '/permissions/0/hidden_columns/0',
    ]);
    expect(
      await pointers([tablePermission(tables.orders, { filters: [{ column: 'ghost', operator: '=', value: '1' }] })]),
    ).toEqual(['/permissions/0/filters/0/column']);
    expect(
      await pointers([tablePermission(tables.orders, { filters: [{ column: 'total', operator: 'like', value: '1' }] })]),
    ).toEqual(['/permissions/0/filters/0/operator']);
    expect(await pointers([tablePermission(tables.orders, { expires_in: 'tomorrow' })])).toEqual(['/permissions/0/expires_in']);
    expect(await pointers([tablePermission(tables.orders), tablePermission(tables.orders)])).toEqual(['/permissions/1/tableId']);
    expect(await pointers([{ tableId: tables.orders, allowed: true }])).toContain('/permissions/0/allow_export');
    expect(
      (await put([tablePermission(tables.orders, { filters: [{ column: 'order_id', operator: 'in', value: '1,2,3' }] })])).status,
    ).toBe(200);

    const theirUser = (await api('POST', '/tenant/users', json(other.tenant.token, { login: 'c@o.io', nome: 'C' }))).body.data.id;
    expectErrorEnvelope(
      await api('PUT', `/tenant/datamart/${dm.id}/user/${theirUser}`, json(tenant.token, { permissions: [] })),
      404,
    );
  });

  test("every datamart route with another tenant's datamart is 404", async () => {
    const mine = await retailTenant();
    const theirs = await retailTenant();
    await api('POST', '/tenant/datamart', json(theirs.tenant.token, { nome: 'T1', tables: [], owners: [] }));
    const theirDm = (await api('POST', '/tenant/datamart', json(theirs.tenant.token, { nome: 'T2', tables: [], owners: [] })))
      .body.data.id;
    const token = mine.tenant.token;
    const routes: Array<[string, string, unknown?]> = [
      ['PATCH', `/tenant/datamart/${theirDm}`, { nome: 'Mine' }],
      ['DELETE', `/tenant/datamart/${theirDm}`],
      ['GET', `/tenant/datamart/${theirDm}/user`],
      ['GET', `/tenant/datamart/${theirDm}/group`],
      ['PUT', `/tenant/datamart/${theirDm}/user/${mine.ana.id}`, { permissions: [] }],
      ['DELETE', `/tenant/datamart/${theirDm}/user/${mine.ana.id}`],
      ['PUT', `/tenant/datamart/${theirDm}/group/${mine.sales.id}`, { permissions: [] }],
      ['DELETE', `/tenant/datamart/${theirDm}/group/${mine.sales.id}`],
      ['GET', `/tenant/datamart/${theirDm}/user/${mine.ana.id}/effective`],
    ];
    for (const [method, path, body] of routes) expectErrorEnvelope(await api(method, path, { token, body }), 404);
    expect(
      (await api('GET', '/tenant/datamart', { token: theirs.tenant.token })).body.data.map((dm: { nome: string }) => dm.nome),
    ).toEqual(['T1', 'T2']);
  });

  test('deleting a user, a group or a datamart, or taking a table out, leaves no record behind', async () => {
    const { tenant, tables, ana, bia, sales } = await retailTenant();
    const dm = (
      await api(
        'POST',
        '/tenant/datamart',
        json(tenant.token, { nome: 'V', tables: [tables.orders, tables.daily], owners: [ana.id, bia.id] }),
      )
    ).body.data;
    await api(
      'PUT',
      `/tenant/datamart/${dm.id}/user/${ana.id}`,
      json(tenant.token, { permissions: [tablePermission(tables.orders), tablePermission(tables.daily)] }),
    );
    await api(
      'PUT',
      `/tenant/datamart/${dm.id}/user/${bia.id}`,
      json(tenant.token, { permissions: [tablePermission(tables.orders)] }),
    );
    await api(
      'PUT',
      `/tenant/datamart/${dm.id}/group/${sales.id}`,
      json(tenant.token, { permissions: [tablePermission(tables.daily)] }),
    );
    const records = async (kind: 'user' | 'group') =>
      (await api('GET', `/tenant/datamart/${dm.id}/${kind}`, { token: tenant.token })).body.data;

    await api('PATCH', `/tenant/datamart/${dm.id}`, json(tenant.token, { tables: [tables.orders] }));
    expect((await records('user')).map((record: { tableId: number }) => record.tableId)).toEqual([tables.orders, tables.orders]);
    expect(await records('group')).toEqual([]);

    await api('DELETE', `/tenant/users/${ana.id}`, { token: tenant.token });
    expect((await records('user')).map((record: { userId: number }) => record.userId)).toEqual([bia.id]);
    const listed = (await api('GET', '/tenant/datamart', { token: tenant.token })).body.data[0];
    expect(listed.owners.map((owner: { userId: number }) => owner.userId)).toEqual([bia.id]);

    await api(
      'PUT',
      `/tenant/datamart/${dm.id}/group/${sales.id}`,
      json(tenant.token, { permissions: [tablePermission(tables.orders)] }),
    );
    await api('DELETE', `/tenant/groups/${sales.id}`, { token: tenant.token });
    expect(await records('group')).toEqual([]);

    await api('DELETE', `/tenant/datamart/${dm.id}/user/${bia.id}`, { token: tenant.token });
    expect(await records('user')).toEqual([]);
  });
});
