/**
 * Work that requests leave to finish after their main write (follow-ups) and the sweeper that
 * finishes it when they stop first; and data stored by the version before these changes, which the
 * new code reads and brings up to date as it goes.
 */
import { DeleteCommand, PutCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { describe, expect, test } from 'vitest';
import { deleteUser } from '#functions/core/directory/users.ts';
import { followUpGraceMs, finishFollowUps } from '#functions/core/follow-ups/sweeper.ts';
import { followUpShards, listFollowUps } from '#functions/core/follow-ups/follow-up-repository.ts';
import { db, getItem, queryAll, tableName } from '#functions/core/store/dynamo.ts';
import { keys } from '#functions/core/store/keys.ts';
import { api, newClient, newTenant } from '#test/support/api.ts';
import { publish, retailBundle } from '#test/support/templates.ts';
import { tablePermission } from '#test/support/permissions.ts';

async function followUpsOf(tenantId: number) {
  const found = [];
  for (let shard = 0; shard < followUpShards; shard++) {
    found.push(...(await listFollowUps(shard, 100, undefined)).items.filter((followUp) => followUp.ownerId === tenantId));
  }
  return found;
}

/** A tenant with the retail template, two users in a group, and a datamart with their permissions. */
async function populated() {
  const client = await newClient();
  const templateId = await publish(client.token, retailBundle());
  const tenant = await newTenant(client.token, { templateId });
  const token = tenant.token;
  const own = (await api('GET', '/tenant', { token })).body.data;
  const tables: number[] = own.desks.flatMap((desk: { tables: Array<{ id: number }> }) => desk.tables.map((table) => table.id));
  const user = (await api('POST', '/tenant/users', { token, body: { login: 'ana@x.io', nome: 'Ana' } })).body.data.id;
  const group = (await api('POST', '/tenant/groups', { token, body: { nome: 'Sales' } })).body.data.id;
  await api('PUT', `/tenant/groups/${group}/members/${user}`, { token });
  const datamart = (await api('POST', '/tenant/datamart', { token, body: { nome: 'DM', tables, owners: [user] } })).body.data.id;
  const permissions = tables.map((tableId) => tablePermission(tableId));
  await api('PUT', `/tenant/datamart/${datamart}/user/${user}`, { token, body: { permissions } });
  return { client, tenant, token, tables, user, group, datamart };
}

describe('the follow-up sweeper', () => {
  test('finishes a deletion whose request stopped after its transaction, but only once the grace period is over', async () => {
    const party = await populated();
    // The deletion's transaction, without the sweep the request does right after it.
    await deleteUser(party.tenant.id, party.user);
    expect(await followUpsOf(party.tenant.id)).toEqual([expect.objectContaining({ kind: 'sweep-user', subjectId: party.user })]);
    const memberKey = keys.membership(party.tenant.id, party.group, party.user);
    expect(await getItem({ pk: memberKey.pk, sk: memberKey.sk })).toBeDefined();

    await finishFollowUps(Date.now(), Date.now() + 30_000);
    const [left] = await followUpsOf(party.tenant.id);
    expect(left).toBeDefined();

    // Time passes: the follow-up is now older than the grace period (other tests' fresh ones are not).
    const { pk, sk } = keys.followUp(followUpShards, party.tenant.id, 'sweep-user', party.user);
    await db().send(
      new PutCommand({ TableName: tableName(), Item: { ...left, pk, sk, createdAt: Date.now() - followUpGraceMs - 1_000 } }),
    );
    const outcome = await finishFollowUps(Date.now(), Date.now() + 30_000);
    expect(outcome.finished).toBeGreaterThanOrEqual(1);
    expect(await followUpsOf(party.tenant.id)).toEqual([]);
    expect(await getItem({ pk: memberKey.pk, sk: memberKey.sk })).toBeUndefined();
    const permission = keys.permission(party.tenant.id, party.datamart, 'user', party.user, party.tables[0] as number);
    expect(await getItem({ pk: permission.pk, sk: permission.sk })).toBeUndefined();
  });

  test('a request that finishes its own work leaves no follow-up behind', async () => {
    const party = await populated();
    await api('DELETE', `/tenant/users/${party.user}`, { token: party.token });
    await api('DELETE', `/tenant/datamart/${party.datamart}`, { token: party.token });
    expect(await followUpsOf(party.tenant.id)).toEqual([]);
  });
});

describe('data stored by the earlier version', () => {
  type Party = Awaited<ReturnType<typeof populated>>;

  /** What every read route shows of the party's datamart, users and permissions. */
  async function readAll({ token, datamart, user }: Party) {
    const data = async (path: string) => {
      const answer = await api('GET', path, { token });
      expect(answer.status, path).toBe(200);
      return answer.body.data;
    };
    return {
      datamarts: await data('/tenant/datamart'),
      datamart: await data(`/tenant/datamart/${datamart}`),
      userRecords: await data(`/tenant/datamart/${datamart}/user`),
      groupRecords: await data(`/tenant/datamart/${datamart}/group`),
      users: await data('/tenant/users'),
      user: await data(`/tenant/users/${user}`),
      effective: await data(`/tenant/datamart/${datamart}/user/${user}/effective`),
    };
  }

  const sortable = (id: number) => String(id).padStart(12, '0');

  /**
   * Stores the party's datamart as an earlier version did: its records indexed by subject, its owner
   * not in the owners index, the record not marked `tenantIndexed`, and (`listsAsItems`) the oldest
   * shape, whose record has no lists: its tables and owners are S#TABLE / S#OWNER items.
   */
  async function storeAsEarlierVersion({ tenant, datamart, tables, user }: Party, listsAsItems: boolean) {
    const record = await getItem<Record<string, unknown>>(keys.datamart(tenant.id, datamart));
    const { tableIds: _tables, ownerIds: _owners, tenantIndexed: _indexed, ...bare } = record as Record<string, unknown>;
    const { tenantIndexed: _alsoIndexed, ...withLists } = record as Record<string, unknown>;
    await db().send(new PutCommand({ TableName: tableName(), Item: listsAsItems ? bare : withLists }));
    if (listsAsItems) {
      for (const tableId of tables) {
        await db().send(
          new PutCommand({ TableName: tableName(), Item: { ...keys.datamartTable(tenant.id, datamart, tableId), tableId } }),
        );
      }
      await db().send(
        new PutCommand({ TableName: tableName(), Item: { ...keys.datamartOwner(tenant.id, datamart, user), userId: user } }),
      );
    }
    const records = await queryAll<Record<string, unknown> & { pk: string; sk: string }>(
      keys.datamartPartition(tenant.id, datamart),
      keys.permissionsPrefix(),
    );
    for (const stored of records) {
      const subject = stored.subject as 'user' | 'group';
      const item = {
        ...stored,
        gsi1pk: keys.legacySubjectPermissionsIndex(tenant.id, subject, stored.subjectId as number),
        gsi1sk: `${sortable(datamart)}#${sortable(stored.tableId as number)}`,
      };
      await db().send(new PutCommand({ TableName: tableName(), Item: item }));
    }
    await db().send(
      new UpdateCommand({ TableName: tableName(), Key: keys.user(tenant.id, user), UpdateExpression: 'REMOVE gsi1pk, gsi1sk' }),
    );
  }

  test.each([
    ['a record holding its lists', false],
    ['the lists as items of the collection', true],
  ])(
    'a datamart of an earlier version (%s, records indexed by subject, owner not in the owners index) reads the same on every route, and its next change moves it',
    async (_shape, listsAsItems) => {
      const party = await populated();
      const { tenant, token, datamart, tables, user, group } = party;
      const permissions = [
        { tableId: tables[1], allowed: false, allow_export: false, expires_in: null, hidden_columns: [], filters: [] },
      ];
      await api('PUT', `/tenant/datamart/${datamart}/group/${group}`, { token, body: { permissions } });
      const now = await readAll(party);
      await storeAsEarlierVersion(party, listsAsItems);
      expect(await readAll(party)).toEqual(now);

      const changed = await api('PATCH', `/tenant/datamart/${datamart}`, { token, body: { tables: tables.slice(1) } });
      expect(changed.status).toBe(200);
      expect(changed.body.data.dm_tables.map((entry: { tableId: number }) => entry.tableId)).toEqual(tables.slice(1));
      expect(await getItem(keys.datamartTable(tenant.id, datamart, tables[1] as number))).toBeUndefined();
      const record = await getItem<{ tableIds: number[]; tenantIndexed?: boolean }>(keys.datamart(tenant.id, datamart));
      expect(record).toMatchObject({ tableIds: tables.slice(1), tenantIndexed: true });
      // Its records are in the tenant's permission index now, its owner in the owners index.
      const moved = await queryAll<{ gsi1pk: string; tableId: number }>(
        keys.datamartPartition(tenant.id, datamart),
        keys.permissionsPrefix(),
      );
      expect(moved.map((stored) => stored.gsi1pk)).toEqual(moved.map(() => keys.tenantPermissionsPartition(tenant.id)));
      expect((await getItem<{ gsi1pk?: string }>(keys.user(tenant.id, user)))?.gsi1pk).toBe(
        keys.datamartOwnersPartition(tenant.id),
      );
      // The permission record on the table taken out went with it; the rest reads as before.
      const after = await readAll(party);
      expect(after.userRecords).toEqual(now.userRecords.filter((entry: { tableId: number }) => entry.tableId !== tables[0]));
      expect(after.groupRecords).toEqual(now.groupRecords);
      expect(after.effective).toEqual(now.effective.filter((entry: { tableId: number }) => entry.tableId !== tables[0]));
    },
  );

  test("a tenant's agents from before names were claimed: a repeated name is refused, and the count starts from them", async () => {
    const client = await newClient();
    const tenant = await newTenant(client.token);
    await api('POST', '/tenant/agents', { token: tenant.token, body: { nome: 'warehouse' } });
    // As the earlier version left it: no count, no name claims.
    for (const key of [
      keys.agentCount(tenant.id),
      keys.agentName(tenant.id, 'default'),
      keys.agentName(tenant.id, 'warehouse'),
    ]) {
      await db().send(new DeleteCommand({ TableName: tableName(), Key: key }));
    }
    const repeated = await api('POST', '/tenant/agents', { token: tenant.token, body: { nome: 'warehouse' } });
    expect(repeated.body.code).toBe('agent_name_taken');
    expect((await api('POST', '/tenant/agents', { token: tenant.token, body: { nome: 'erp' } })).status).toBe(201);
    expect((await getItem<{ value: number }>(keys.agentCount(tenant.id)))?.value).toBe(3);
    const again = await api('POST', '/tenant/agents', { token: tenant.token, body: { nome: 'warehouse' } });
    expect(again.body.code).toBe('agent_name_taken');
  });
});
