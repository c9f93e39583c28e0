/**
 * No read route answers more than one Lambda result carries (6 MB as it travels): each answers under
 * it, or a 400 `answer_too_large` whose `limit` advice works (a page of one always fits for data
 * written under the quotas), and never builds the whole of an answer too large first. The tenants
 * are built cheaply: through the routes in this process where the quotas are the point, straight
 * through the repositories (or as items) where what is measured is the reads.
 */
import { describe, expect, test } from 'vitest';
import { maxResultBytes } from '#functions/core/api/whole-list.ts';
import { createGroup, addMember, listGroupViews } from '#functions/core/directory/groups.ts';
import { createUser } from '#functions/core/directory/users.ts';
import { maxGroupPermissionBytes, maxGroupsPerTenant, maxUserPermissionBytes } from '#functions/core/directory/quotas.ts';
import { countsKept } from '#functions/core/migrations/counts-kept.ts';
import { putAll } from '#functions/core/store/dynamo.ts';
import * as stored from '#functions/core/store/entity-declarations.ts';
import { newClient } from '#test/support/api.ts';
import { each } from '#test/support/each.ts';
import { type Answer, callRoute } from '#test/support/in-process.ts';
import { tablePermission } from '#test/support/permissions.ts';
import { retailBundle } from '#test/support/templates.ts';

/** The body as it travels in the result: its JSON, escaped once more. */
const travelling = (answer: Answer) => Buffer.byteLength(JSON.stringify(JSON.stringify(answer.body)));

const get = (path: string, token: string) => callRoute({ method: 'GET', path, token });
const send = (method: string, path: string, token: string, body?: unknown) => callRoute({ method, path, token, body });

/** A tenant with the retail template applied: its id, token and tables by key. */
async function retailTenant() {
  const client = await newClient();
  const template = await send('POST', '/tenants/templates', client.token, {
    ...retailBundle(),
    nome: `Retail ${crypto.randomUUID()}`,
  });
  const created = await send('POST', '/tenants', client.token, { nome: 'Big', ativo: true, templateId: template.body.data.id });
  const token = created.body.data.token as string;
  const own = (await get('/tenant', token)).body.data;
  const tables = Object.fromEntries(
    (own.desks[0].tables as Array<{ key: string; id: number }>).map((table) => [table.key, table.id]),
  ) as Record<'orders' | 'daily' | 'stock', number>;
  return { tenantId: created.body.data.id as number, token, tables };
}

/**
 * `count` groups named `nome`, each with `userId` as its member, written as items (ids from 100,000 on,
 * past any the tenant allocated): the items the repositories write, without their quota checks.
 */
async function writeGroupsWith(tenantId: number, userId: number, count: number, nome: string): Promise<number[]> {
  const now = new Date().toISOString();
  const groupIds = Array.from({ length: count }, (_, index) => 100_000 + index);
  await putAll(
    groupIds.flatMap((groupId) => {
      const member = { tenantId, groupId, userId };
      return [
        { ...stored.group.key({ tenantId, groupId }), groupId, tenantId, nome, createdAt: now },
        { ...stored.membership.key(member), ...stored.membership.indexEntry(member), tenantId, groupId, userId },
      ];
    }),
  );
  return groupIds;
}

/** Every answer of a read route: under the bound, or the documented 400 (its advice is followed by the caller). */
function expectBounded(answer: Answer, label: string) {
  expect(travelling(answer), label).toBeLessThan(maxResultBytes);
  if (answer.status !== 200)
    expect({ status: answer.status, code: answer.body.code }, label).toEqual({ status: 400, code: 'answer_too_large' });
}

/** Reads the whole user list by following the 400's advice, page after page: every page fits. */
async function readUsersInPages(token: string) {
  const whole = await get('/tenant/users', token);
  expectBounded(whole, 'GET /tenant/users');
  if (whole.status === 200) return whole.body.data as unknown[];
  const limit = Number(/limit=(\d+)/.exec(whole.body.message)?.[1]);
  expect(limit).toBeGreaterThanOrEqual(1);
  const users: unknown[] = [];
  let cursor: string | null = null;
  do {
    const page: Answer = await get(`/tenant/users?limit=${limit}${cursor ? `&cursor=${cursor}` : ''}`, token);
    expectBounded(page, `GET /tenant/users?limit=${limit}`);
    expect(page.status).toBe(200);
    users.push(...page.body.data);
    cursor = page.body.nextCursor;
  } while (cursor);
  return users;
}

/** Fifty filters of 1,000-character values on `column`, unlike any other record's (`tag`). */
const bigFilters = (column: string, tag: string, character = 'v') =>
  Array.from({ length: 50 }, (_, index) => ({ column, operator: '=', value: `${tag}-${index}-`.padEnd(1000, character) }));

describe('the reviewers’ setups, under the quotas', () => {
  test('setup A (20 groups, 50 users in all, 11 datamarts, records of 50 filters of 1,000 characters): refused past the quota; every read fits or says which limit does', async () => {
    const { token, tables } = await retailTenant();
    const users = await each(
      50,
      async (index) =>
        (await send('POST', '/tenant/users', token, { login: `u${index}`, nome: `U${index}` })).body.data.id as number,
    );
    const groups = await each(
      20,
      async (index) => (await send('POST', '/tenant/groups', token, { nome: `G${index}` })).body.data.id as number,
    );
    await each(users.length * groups.length, (index) =>
      send('PUT', `/tenant/groups/${groups[index % groups.length]}/members/${users[Math.floor(index / groups.length)]}`, token),
    );
    const datamarts = await each(
      11,
      async (index) =>
        (await send('POST', '/tenant/datamart', token, { nome: `D${index}`, tables: [tables.orders], owners: [] })).body.data
          .id as number,
    );
    const puts = await each(
      groups.length * datamarts.length,
      (index) => {
        const group = groups[index % groups.length] as number;
        const datamart = datamarts[Math.floor(index / groups.length)] as number;
        const permissions = [tablePermission(tables.orders, { filters: bigFilters('order_id', `g${group}`) })];
        return send('PUT', `/tenant/datamart/${datamart}/group/${group}`, token, { permissions });
      },
      4,
    );
    const statuses = puts.map((answer) => answer.status);
    const written = statuses.filter((status) => status === 200).length;
    // About 106 KB a record (its filters counted twice: in the flat fields and in its grant) against 4 MB for
    // all the tenant's group records: some 39 of the 220.
    expect(written).toBeGreaterThan(30);
    expect(written).toBeLessThan(50);
    expect(
      puts
        .filter((answer) => answer.status !== 200)
        .every((answer) => answer.status === 409 && answer.body.code === 'permission_limit'),
    ).toBe(true);

    const whole = await get('/tenant/users', token);
    expectBounded(whole, 'GET /tenant/users');
    expect(whole.status).toBe(400);
    expect(whole.body.message).toMatch(/^The whole list \(50 items, over \d+\.\d MB\).*send limit=1 or less/);
    // Refused once two users are measured, not after building fifty (the reviewers measured 555 MB
    // and 9.9 s before a 500).
    expect(await readUsersInPages(token)).toHaveLength(50);

    for (const path of [
      `/tenant/users/${users[0]}`,
      '/tenant/users?limit=1',
      '/tenant/groups',
      `/tenant/groups/${groups[0]}`,
      '/tenant/datamart',
      `/tenant/datamart/${datamarts[0]}`,
      `/tenant/datamart/${datamarts[0]}/group`,
      `/tenant/datamart/${datamarts[0]}/user`,
      `/tenant/datamart/${datamarts[0]}/user/${users[0]}/effective`,
      '/tenant',
    ]) {
      const answer = await get(path, token);
      expectBounded(answer, path);
      expect(answer.status, path).toBe(200);
    }
  }, 240_000);

  test('setup B (one user put in 8,000 groups): groups stop at 1,000; the user and the groups answer whole', async () => {
    const { tenantId, token } = await retailTenant();
    const user = await createUser(tenantId, { login: 'everywhere', nome: 'Everywhere' });
    const groups = await each(maxGroupsPerTenant, async (index) => (await createGroup(tenantId, `Group ${index}`)).groupId);
    await each(groups.length, (index) => addMember(tenantId, groups[index] as number, user.userId));
    const over = await send('POST', '/tenant/groups', token, { nome: 'One too many' });
    expect({ status: over.status, code: over.body.code }).toEqual({ status: 409, code: 'group_limit' });
    for (const path of ['/tenant/groups', `/tenant/groups/${groups[0]}`, `/tenant/users/${user.userId}`, '/tenant/users']) {
      const answer = await get(path, token);
      expectBounded(answer, path);
      expect(answer.status, path).toBe(200);
    }
    // Deleting one frees its place (and its membership's).
    expect((await send('DELETE', `/tenant/groups/${groups[0]}`, token)).status).toBe(200);
    expect((await send('POST', '/tenant/groups', token, { nome: 'In its place' })).status).toBe(201);
  }, 240_000);
});

describe('the worst a tenant can write within its quotas still answers whole', () => {
  test('a user in 1,000 groups of the worst names, with the group and user permission budgets spent on the worst records: under 6 MB', async () => {
    const { tenantId, token, tables } = await retailTenant();
    const worstName = '"'.repeat(200);
    const user = await createUser(tenantId, { login: worstName, nome: worstName, email: `${'"'.repeat(249)}@a.io` });
    // Written as items: what is measured here is the reads (setup B puts a user in as many groups through the repositories).
    const groups = await writeGroupsWith(tenantId, user.userId, maxGroupsPerTenant, worstName);
    const datamart = (
      await send('POST', '/tenant/datamart', token, { nome: worstName, tables: Object.values(tables), owners: [user.userId] })
    ).body.data.id as number;
    // Control characters: 7 bytes each as they travel, the most any character takes.
    const worstRecord = (tableId: number, column: string, tag: string) =>
      tablePermission(tableId, { expires_in: '2999-01-01T00:00:00.000000001+05:30', filters: bigFilters(column, tag, '\u0001') });
    const groupPuts = [];
    for (const group of groups.slice(0, 20)) {
      groupPuts.push(
        await send('PUT', `/tenant/datamart/${datamart}/group/${group}`, token, {
          permissions: [worstRecord(tables.orders, 'order_id', `g${group}`)],
        }),
      );
      if (groupPuts.at(-1)?.status !== 200) break;
    }
    expect(groupPuts.at(-1)?.body.code).toBe('permission_limit');
    // Some 702 KB each (its filters counted twice: in the flat fields and in its grant) against 4 MB for all the
    // tenant's group records.
    expect(groupPuts.filter((answer) => answer.status === 200).length).toBe(Math.floor(maxGroupPermissionBytes / 702_000));
    const own = await send('PUT', `/tenant/datamart/${datamart}/user/${user.userId}`, token, {
      permissions: [worstRecord(tables.daily, 'day', 'u1')],
    });
    expect(own.status).toBe(200);
    const second = await send('PUT', `/tenant/datamart/${datamart}/user/${user.userId}`, token, {
      permissions: [worstRecord(tables.daily, 'day', 'u1'), worstRecord(tables.stock, 'sku', 'u2')],
    });
    expect({ status: second.status, code: second.body.code }).toEqual({ status: 409, code: 'permission_limit' });
    expect(maxUserPermissionBytes).toBeLessThan(2 * 702_000);

    const one = await get(`/tenant/users/${user.userId}`, token);
    expect(one.status).toBe(200);
    const size = travelling(one);
    expect(size).toBeLessThan(maxResultBytes);
    // It is the worst case indeed: most of an answer.
    expect(size).toBeGreaterThan(4.5 * 1024 * 1024);
    for (const path of [
      '/tenant/users?limit=1',
      '/tenant/users',
      '/tenant/groups',
      `/tenant/groups/${groups[0]}`,
      `/tenant/datamart/${datamart}/group`,
    ]) {
      const answer = await get(path, token);
      expectBounded(answer, path);
      expect(answer.status, path).toBe(200);
    }
  }, 300_000);
});

describe('data written before the quotas', () => {
  test('8,000 groups of one user: the groups and the user answer 200 or the 400, never more than a result', async () => {
    const { tenantId, token } = await retailTenant();
    const user = await createUser(tenantId, { login: 'legacy', nome: 'Legacy' });
    const count = 8_000;
    await writeGroupsWith(tenantId, user.userId, count, '"'.repeat(200));
    for (const path of ['/tenant/groups', `/tenant/users/${user.userId}`, '/tenant/users?limit=1']) {
      const answer = await get(path, token);
      expectBounded(answer, path);
    }
    // The counts migration starts the count from what is there: no group more until the tenant is under its quota.
    await countsKept.migrate({ ...stored.tenant.key({ tenantId }), tenantId });
    const over = await send('POST', '/tenant/groups', token, { nome: 'More' });
    expect({ status: over.status, code: over.body.code }).toEqual({ status: 409, code: 'group_limit' });

    expect((await listGroupViews(tenantId, undefined, undefined)).items).toHaveLength(count);
  }, 240_000);
});
