/**
 * Work that requests leave to finish after their main write (follow-ups) and the sweeper that
 * finishes it when they stop first; and data stored by the version before these changes, which the
 * new code reads and brings up to date as it goes.
 */
import { PutCommand, DeleteCommand } from '@aws-sdk/lib-dynamodb';
import { describe, expect, test } from 'vitest';
import { deleteUser } from '#functions/core/directory/users.ts';
import { followUpGraceMs, finishFollowUps } from '#functions/core/follow-ups/sweeper.ts';
import { followUpShards, listFollowUps } from '#functions/core/follow-ups/follow-up-repository.ts';
import { db, getItem, tableName } from '#functions/core/store/dynamo.ts';
import { keys } from '#functions/core/store/keys.ts';
import { api, newClient, newTenant } from '#test/support/api.ts';
import { publish, retailBundle } from '#test/support/templates.ts';

async function followUpsOf(tenantId: number) {
  const found = [];
  for (let shard = 0; shard < followUpShards; shard++) {
    found.push(...(await listFollowUps(shard, 100, undefined)).items.filter((followUp) => followUp.tenantId === tenantId));
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
  const permissions = tables.map((tableId) => ({
    tableId,
    allowed: true,
    allow_export: false,
    expires_in: null,
    hidden_columns: [],
    filters: [],
  }));
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
  test('a datamart whose tables and owners are items of its collection reads the same, and its next change folds them into the record', async () => {
    const party = await populated();
    const { tenant, token, datamart, tables, user } = party;
    // As the earlier version stored it: a record without lists, and S#TABLE / S#OWNER items.
    const record = await getItem<Record<string, unknown>>(keys.datamart(tenant.id, datamart));
    const { tableIds: _tables, ownerIds: _owners, ...legacy } = record as Record<string, unknown>;
    await db().send(new PutCommand({ TableName: tableName(), Item: legacy }));
    for (const tableId of tables) {
      await db().send(
        new PutCommand({ TableName: tableName(), Item: { ...keys.datamartTable(tenant.id, datamart, tableId), tableId } }),
      );
    }
    await db().send(
      new PutCommand({ TableName: tableName(), Item: { ...keys.datamartOwner(tenant.id, datamart, user), userId: user } }),
    );

    const read = (await api('GET', '/tenant/datamart', { token })).body.data[0];
    expect(read.dm_tables.map((entry: { tableId: number }) => entry.tableId)).toEqual(tables);
    expect(read.owners.map((entry: { userId: number }) => entry.userId)).toEqual([user]);
    expect((await api('GET', `/tenant/datamart/${datamart}/user`, { token })).body.data).toHaveLength(tables.length);

    const changed = await api('PATCH', `/tenant/datamart/${datamart}`, { token, body: { tables: tables.slice(1) } });
    expect(changed.status).toBe(200);
    expect(changed.body.data.dm_tables.map((entry: { tableId: number }) => entry.tableId)).toEqual(tables.slice(1));
    expect(await getItem(keys.datamartTable(tenant.id, datamart, tables[1] as number))).toBeUndefined();
    expect((await getItem<{ tableIds: number[] }>(keys.datamart(tenant.id, datamart)))?.tableIds).toEqual(tables.slice(1));
    // The permission record on the table taken out went with it.
    expect((await api('GET', `/tenant/datamart/${datamart}/user`, { token })).body.data).toHaveLength(tables.length - 1);
  });

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
