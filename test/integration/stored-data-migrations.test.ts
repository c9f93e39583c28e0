/**
 * The service's migrations of stored data (functions/core/migrations/), on data stored as the
 * earlier versions stored it: after the migration the data is in the shape this version reads, and
 * every read route answers as it did before the data was put back in its old shape; a migration
 * stopped at any write and run again ends the same.
 */
import { randomUUID } from 'node:crypto';
import { DeleteCommand, PutCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { describe, expect, test } from 'vitest';
import { datamartsInTenantIndexes } from '#functions/core/migrations/datamarts-in-tenant-indexes.ts';
import { runsExpire } from '#functions/core/migrations/runs-expire.ts';
import { templatesHaveFleets } from '#functions/core/migrations/templates-have-fleets.ts';
import { templateNamesClaimed } from '#functions/core/migrations/template-names-claimed.ts';
import { latestMigration, storedData } from '#functions/core/migrations/stored-data.ts';
import { db, getItem, queryAll, tableName } from '#functions/core/store/dynamo.ts';
import * as stored from '#functions/core/store/entity-declarations.ts';
import { appliedVersion } from '#functions/core/store/migrations.ts';
import { api, newClient, newTenant } from '#test/support/api.ts';
import { publish, retailBundle } from '#test/support/templates.ts';
import { InjectedFault, installFaultInjection, newTrace, traced } from '#test/support/faults.ts';
import { migrateWithin, stoppedAfterEachWrite } from '#test/support/migrations.ts';
import { type DatamartParty, populatedDatamart, readDatamartParty } from '#test/support/datamart-party.ts';

installFaultInjection();

const sortable = (id: number) => String(id).padStart(12, '0');

/** The party with a group's record too, as the current version stores it, and what every read route answers. */
async function partyWithReads() {
  const party = await populatedDatamart();
  const { token, datamart, tables, group } = party;
  const permissions = [
    { tableId: tables[1], allowed: false, allow_export: false, expires_in: null, hidden_columns: [], filters: [] },
  ];
  await api('PUT', `/tenant/datamart/${datamart}/group/${group}`, { token, body: { permissions } });
  return { party, reads: await readDatamartParty(party) };
}

/**
 * Stores the party's datamart as an earlier version did: its records indexed by subject, its owner
 * not in the owners index, the record not marked `tenantIndexed`, and (`listsAsItems`) the oldest
 * shape, whose record has no lists: its tables and owners are S#TABLE / S#OWNER items.
 */
async function storeAsEarlierVersion({ tenant, datamart, tables, user }: DatamartParty, listsAsItems: boolean) {
  const tenantId = tenant.id;
  const record = await getItem<Record<string, unknown>>(stored.datamart.key({ tenantId, datamartId: datamart }));
  const { tableIds: _tables, ownerIds: _owners, tenantIndexed: _indexed, ...bare } = record as Record<string, unknown>;
  const { tenantIndexed: _alsoIndexed, ...withLists } = record as Record<string, unknown>;
  await db().send(new PutCommand({ TableName: tableName(), Item: listsAsItems ? bare : withLists }));
  if (listsAsItems) {
    for (const tableId of tables) {
      const item = { ...stored.datamartTable.key({ tenantId, datamartId: datamart, tableId }), tableId };
      await db().send(new PutCommand({ TableName: tableName(), Item: item }));
    }
    const owner = {
      ...stored.datamartOwner.key({ tenantId, datamartId: datamart, userId: user }),
      ...stored.datamartOwner.indexEntry({ tenantId, datamartId: datamart, userId: user }),
      userId: user,
    };
    await db().send(new PutCommand({ TableName: tableName(), Item: owner }));
  }
  const records = await queryAll<Record<string, unknown> & { pk: string; sk: string }>(
    stored.datamart.partition({ tenantId, datamartId: datamart }),
    stored.permission.keyPrefix({}),
  );
  for (const record of records) {
    const item = {
      ...record,
      gsi1pk: stored.permission.legacyIndexes.gsi1.partition({
        tenantId,
        subject: record.subject as 'user' | 'group',
        subjectId: record.subjectId as number,
      }),
      gsi1sk: `${sortable(datamart)}#${sortable(record.tableId as number)}`,
    };
    await db().send(new PutCommand({ TableName: tableName(), Item: item }));
  }
  await db().send(
    new UpdateCommand({
      TableName: tableName(),
      Key: stored.user.key({ tenantId, userId: user }),
      UpdateExpression: 'REMOVE gsi1pk, gsi1sk',
    }),
  );
}

/** The datamart is in the shape this version reads: lists on its record, everything in the tenant's indexes. */
async function expectCurrentShape({ tenant, datamart, tables, user }: DatamartParty) {
  const tenantId = tenant.id;
  const items = await queryAll<Record<string, unknown> & { sk: string }>(
    stored.datamart.partition({ tenantId, datamartId: datamart }),
    '',
  );
  const record = items.find((item) => item.sk === stored.datamart.keyPrefix({}));
  expect(record).toMatchObject({ tableIds: tables, ownerIds: [user], tenantIndexed: true });
  expect(items.filter((item) => item.sk.startsWith('S#') && item !== record)).toEqual([]);
  const permissions = items.filter((item) => item.sk.startsWith(stored.permission.keyPrefix({})));
  expect(permissions.length).toBeGreaterThan(0);
  expect(permissions.map((item) => item.gsi1pk)).toEqual(
    permissions.map(() => stored.permission.indexes.gsi1.partition({ tenantId })),
  );
  expect((await getItem<{ gsi1pk?: string }>(stored.user.key({ tenantId, userId: user })))?.gsi1pk).toBe(
    stored.user.indexes.gsi1.partition({ tenantId }),
  );
}

const recordItem = async ({ tenant, datamart }: DatamartParty) =>
  (await getItem<Record<string, unknown>>(stored.datamart.key({ tenantId: tenant.id, datamartId: datamart }))) as Record<
    string,
    unknown
  >;

describe('stored data migrations', () => {
  test('the twin ran every migration at start', async () => {
    expect(await appliedVersion(storedData)).toBe(latestMigration);
  });

  test.each([
    ['a record holding its lists', false],
    ['the lists as items of the collection', true],
  ])(
    'migration 1: a datamart of an earlier version (%s) ends in the current shape, and every read route answers as before',
    async (_shape, listsAsItems) => {
      const { party, reads } = await partyWithReads();
      await storeAsEarlierVersion(party, listsAsItems);
      const partition = stored.datamart.partition({ tenantId: party.tenant.id, datamartId: party.datamart });
      expect(await migrateWithin(datamartsInTenantIndexes, [partition])).toBe(1);
      await expectCurrentShape(party);
      expect(await readDatamartParty(party)).toEqual(reads);
    },
  );

  test('migration 1 stopped at any write ends, once run again, in the current shape with the same answers', async () => {
    const writes = await stoppedAfterEachWrite({
      prepare: async () => {
        const { party, reads } = await partyWithReads();
        await storeAsEarlierVersion(party, true);
        return { party, reads, record: await recordItem(party) };
      },
      run: ({ record }) => datamartsInTenantIndexes.migrate(record),
      check: async ({ party, reads }, after) => {
        await expectCurrentShape(party);
        expect(await readDatamartParty(party), after).toEqual(reads);
      },
      // Each case has data of its own.
      width: 4,
    });
    expect(writes).toBeGreaterThan(3);
  }, 240_000);

  test('migration 4: templates published before names were claimed get their claims; a name two shared stays with one, and a new one of it is refused', async () => {
    const client = await newClient();
    const retail = await publish(client.token, retailBundle());
    const other = await publish(client.token, { ...retailBundle(), nome: 'Other' });
    const third = await publish(client.token, { ...retailBundle(), nome: 'Third' });
    const { clientId } = client;
    for (const nome of ['Retail', 'Other', 'Third']) {
      await db().send(new DeleteCommand({ TableName: tableName(), Key: stored.templateName.key({ clientId, nome }) }));
    }
    await db().send(
      new UpdateCommand({
        TableName: tableName(),
        Key: stored.template.key({ clientId, templateId: third }),
        UpdateExpression: 'SET nome = :nome',
        ExpressionAttributeValues: { ':nome': 'RETAIL' },
      }),
    );
    expect(await migrateWithin(templateNamesClaimed, [stored.client.partition({ clientId })])).toBe(3);

    const holder = await getItem<{ templateId: number }>(stored.templateName.key({ clientId, nome: 'retail' }));
    expect([retail, third]).toContain(holder?.templateId);
    expect((await getItem<{ templateId: number }>(stored.templateName.key({ clientId, nome: 'Other' })))?.templateId).toBe(other);
    const again = await api('POST', '/tenants/templates', { token: client.token, body: { ...retailBundle(), nome: 'retail' } });
    expect(again.status).toBe(409);
    expect(again.body).toMatchObject({ code: 'template_name_taken' });
    expect(again.body.message).toContain(`(id ${holder?.templateId})`);
    const otherAgain = await api('POST', '/tenants/templates', {
      token: client.token,
      body: { ...retailBundle(), nome: 'Other' },
    });
    expect(otherAgain.body.message).toContain(`(id ${other})`);
  });

  test('migration 4 stopped at its write claims the name when run again', async () => {
    const client = await newClient();
    const templateId = await publish(client.token, { ...retailBundle(), nome: `Claimed later ${randomUUID()}` });
    const record = (await getItem<Record<string, unknown> & { nome: string }>(
      stored.template.key({ clientId: client.clientId, templateId }),
    )) as Record<string, unknown> & { nome: string };
    const claim = stored.templateName.key({ clientId: client.clientId, nome: record.nome });
    await db().send(new DeleteCommand({ TableName: tableName(), Key: claim }));
    const trace = newTrace();
    trace.plan = { mode: 'kill', at: 0 };
    await expect(traced(trace, () => templateNamesClaimed.migrate(record))).rejects.toBeInstanceOf(InjectedFault);
    expect(await getItem(claim)).toBeUndefined();
    await templateNamesClaimed.migrate(record);
    await templateNamesClaimed.migrate(record);
    expect(await getItem(claim)).toEqual({ ...claim, templateId });
  });

  test('migration 7: runs an earlier version wrote without an expiry get the one of their creation, and lose the copy of the variables', async () => {
    const client = await newClient();
    const tenant = await newTenant(client.token);
    const day = 86_400_000;
    const earlier = (runId: number, ageDays: number) => ({
      ...stored.run.key({ tenantId: tenant.id, runId }),
      runId,
      tenantId: tenant.id,
      agentId: 1,
      flowId: 1,
      context: 'ctx',
      batchId: `batch-${runId}`,
      status: 'succeeded',
      createdAt: new Date(Date.now() - ageDays * day).toISOString(),
      updatedAt: new Date(Date.now() - ageDays * day).toISOString(),
      variables: { SECRET_LIKE: 'x'.repeat(1000) },
    });
    const recent = earlier(900_001, 2);
    const old = earlier(900_002, 200);
    for (const item of [recent, old]) await db().send(new PutCommand({ TableName: tableName(), Item: item }));
    const before = await api('GET', '/tenant/runs', { token: tenant.token });

    const trace = newTrace();
    trace.plan = { mode: 'kill', at: 0 };
    await expect(traced(trace, () => runsExpire.migrate(recent))).rejects.toBeInstanceOf(InjectedFault);
    expect(await migrateWithin(runsExpire, [stored.tenant.partition({ tenantId: tenant.id })])).toBe(2);

    for (const item of [recent, old]) {
      const { variables: _variables, ...rest } = item;
      expect(await getItem(stored.run.key(item))).toEqual({
        ...rest,
        expiresAt: Math.floor(Date.parse(item.createdAt) / 1000) + 90 * 86_400,
      });
    }
    expect(await api('GET', '/tenant/runs', { token: tenant.token })).toMatchObject({ status: 200, body: before.body });
  });

  test('migration 8: tenants an earlier version gave a template join its fleet, at the version they run or waiting', async () => {
    const client = await newClient();
    const templateId = await publish(client.token, retailBundle());
    const active = await newTenant(client.token, { templateId });
    const waiting = await newTenant(client.token, { templateId, ativo: false });
    const fleet = () => api('GET', `/tenants/templates/${templateId}/tenants`, { token: client.token });
    const before = await fleet();
    expect(before.body.data.map((member: { templateVersion: number | null }) => member.templateVersion)).toEqual([null, 1]);
    // As an earlier version stored them: no fleet item.
    for (const tenant of [active, waiting]) {
      await db().send(new DeleteCommand({ TableName: tableName(), Key: stored.templateMember.key({ tenantId: tenant.id }) }));
    }
    expect((await fleet()).body.data).toEqual([]);
    const partitions = [active, waiting].map((tenant) => stored.tenant.partition({ tenantId: tenant.id }));

    const trace = newTrace();
    trace.plan = { mode: 'kill', at: 0 };
    const [first] = await Promise.all([getItem<Record<string, unknown>>(stored.tenant.key({ tenantId: active.id }))]);
    await expect(traced(trace, () => templatesHaveFleets.migrate(first as Record<string, unknown>))).rejects.toBeInstanceOf(
      InjectedFault,
    );
    expect(await migrateWithin(templatesHaveFleets, partitions)).toBe(2);
    expect(await fleet()).toMatchObject({ status: 200, body: before.body });
    // Run again (a resumed page): nothing changes, and a newer item an apply wrote is kept.
    expect(await migrateWithin(templatesHaveFleets, partitions)).toBe(2);
    expect(await fleet()).toMatchObject({ status: 200, body: before.body });
  });
});
