/**
 * GET /tenant/users/{id} reads what its answer needs: the user's own groups and their records, not
 * every group's. Counted on the store's own client against DynamoDB Local (requests, and the items
 * they returned) on a tenant with many groups the user is not in, then again with as many more:
 * the same requests, the same items. The answer is the one GET /tenant/users gives the user, which
 * still reads every group's records.
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { isTokenUseStamp } from '#functions/core/auth/token-use.ts';
import { groupRecordQueries, idRanges } from '#functions/core/directory/directory.ts';
import { db } from '#functions/core/store/dynamo.ts';
import { api, newClient, newTenant } from '#test/support/api.ts';
import { each } from '#test/support/each.ts';
import { callRoute } from '#test/support/in-process.ts';
import { tablePermission } from '#test/support/permissions.ts';
import { publish, retailBundle } from '#test/support/templates.ts';

/** What a counted call read: its DynamoDB requests and the items they answered (token-use stamps left out: the clock's, not the route's). */
interface Tally {
  requests: number;
  items: number;
}
const counting = new AsyncLocalStorage<Tally>();
const middlewareName = 'countDynamoReadsForUserAccessTest';

beforeAll(() => {
  db().middlewareStack.add(
    (next) => async (args) => {
      const tally = counting.getStore();
      if (!tally || isTokenUseStamp(args.input)) return next(args);
      const result = await next(args);
      const output = result.output as { Item?: unknown; Items?: unknown[]; Responses?: Record<string, unknown[]> };
      tally.requests += 1;
      tally.items +=
        (output.Item === undefined ? 0 : 1) +
        (output.Items?.length ?? 0) +
        Object.values(output.Responses ?? {}).reduce((sum, items) => sum + items.length, 0);
      return result;
    },
    { step: 'initialize', name: middlewareName },
  );
});
afterAll(() => {
  db().middlewareStack.remove(middlewareName);
});

/** GET /tenant/users/{id}, in this process: its answer's data and what it read. */
async function readUser(token: string, userId: number) {
  const tally: Tally = { requests: 0, items: 0 };
  const answer = await counting.run(tally, () => callRoute({ method: 'GET', path: `/tenant/users/${userId}`, token }));
  expect(answer.status, JSON.stringify(answer.body)).toBe(200);
  return { data: answer.body.data, tally };
}

/** The user as GET /tenant/users shows them (every group's records read). */
async function listedUser(token: string, userId: number) {
  const answer = await callRoute({ method: 'GET', path: '/tenant/users', token });
  expect(answer.status).toBe(200);
  return (answer.body.data as Array<{ id: number }>).find((user) => user.id === userId);
}

/**
 * A tenant of the retail template with a datamart of its tables and `count` groups, each with a
 * record on one of the tables (every third denying, the first table's filtered): `few` is in four of
 * them, `many` in twelve, every other one of a run (more than `groupRecordQueries`).
 */
async function tenantWithGroups(count: number) {
  const client = await newClient();
  const tenant = await newTenant(client.token, { templateId: await publish(client.token, retailBundle()) });
  const { token } = tenant;
  const own = (await api('GET', '/tenant', { token })).body.data;
  const tables: number[] = own.desks.flatMap((desk: { tables: Array<{ id: number }> }) => desk.tables.map((table) => table.id));
  const datamart = (await api('POST', '/tenant/datamart', { token, body: { nome: 'DM', tables, owners: [] } })).body.data
    .id as number;
  const newUser = async (login: string) =>
    (await api('POST', '/tenant/users', { token, body: { login, nome: login } })).body.data.id as number;
  const users = { few: await newUser('few@x.io'), many: await newUser('many@x.io') };
  await api('PUT', `/tenant/datamart/${datamart}/user/${users.few}`, {
    token,
    body: { permissions: [tablePermission(tables[0] as number, { allow_export: true })] },
  });
  const groups: number[] = [];
  let named = 0;
  const addGroups = (how: number) =>
    each(how, async () => {
      const nome = `G${(named += 1)}`;
      const group = (await api('POST', '/tenant/groups', { token, body: { nome } })).body.data.id as number;
      const index = groups.push(group) - 1;
      const table = index % tables.length;
      const permission = tablePermission(tables[table] as number, {
        allowed: index % 3 !== 0,
        // The first table's are filtered (its column `order_id`), each on a value of its own.
        filters: table === 0 ? [{ column: 'order_id', operator: '=', value: String(index) }] : [],
      });
      const written = await api('PUT', `/tenant/datamart/${datamart}/group/${group}`, {
        token,
        body: { permissions: [permission] },
      });
      expect(written.status, JSON.stringify(written.body)).toBe(200);
    });
  await addGroups(count);
  groups.sort((a, b) => a - b);
  const memberOf = {
    few: [10, 20, 30, 40].map((index) => groups[index] as number),
    many: Array.from({ length: 12 }, (_, index) => groups[5 + 2 * index] as number),
  };
  for (const [who, ids] of Object.entries(memberOf) as Array<[keyof typeof users, number[]]>) {
    for (const group of ids)
      expect((await api('PUT', `/tenant/groups/${group}/members/${users[who]}`, { token })).status).toBe(200);
  }
  return { token, users, memberOf, addGroups };
}

describe('GET /tenant/users/{id} reads the groups the user is in, not the tenant’s', () => {
  test('as many requests and items with 60 groups the user is not in as with 120, and the answer GET /tenant/users gives', async () => {
    const { token, users, memberOf, addGroups } = await tenantWithGroups(64);
    const before = { few: await readUser(token, users.few), many: await readUser(token, users.many) };
    for (const who of ['few', 'many'] as const) {
      const { data } = before[who];
      expect(data.groups.map((group: { id: number }) => group.id)).toEqual(memberOf[who]);
      expect(data, who).toEqual(await listedUser(token, users[who]));
    }
    // A user in few groups reads their records alone: far fewer items than the tenant's 64 groups' records.
    expect(before.few.tally.items).toBeLessThan(20);
    // A user in more groups than `groupRecordQueries` reads them in that many Queries, not one per group.
    expect(before.many.tally.requests - before.few.tally.requests).toBe(groupRecordQueries - memberOf.few.length);

    await addGroups(60);
    for (const who of ['few', 'many'] as const) {
      const after = await readUser(token, users[who]);
      expect(after.tally, who).toEqual(before[who].tally);
      expect(after.data, who).toEqual(before[who].data);
      expect(after.data, who).toEqual(await listedUser(token, users[who]));
    }
  }, 120_000);
});

describe('idRanges: ids as at most so many ranges', () => {
  test.each([
    { ids: [], most: 8, ranges: [] },
    { ids: [7], most: 8, ranges: [[7, 7]] },
    {
      ids: [9, 3, 3, 5],
      most: 8,
      ranges: [
        [3, 3],
        [5, 5],
        [9, 9],
      ],
    },
    {
      ids: [1, 2, 10, 11, 30],
      most: 2,
      ranges: [
        [1, 11],
        [30, 30],
      ],
    },
    {
      ids: [1, 2, 10, 11, 30],
      most: 3,
      ranges: [
        [1, 2],
        [10, 11],
        [30, 30],
      ],
    },
    { ids: [1, 3, 5, 7], most: 1, ranges: [[1, 7]] },
    // Gaps of equal width: the first ones split.
    {
      ids: [1, 3, 5, 7],
      most: 2,
      ranges: [
        [1, 1],
        [3, 7],
      ],
    },
  ])('$ids in at most $most', ({ ids, most, ranges }) => {
    expect(idRanges(ids, most)).toEqual(ranges);
  });
});
