/**
 * Migration 3 (functions/core/migrations/templates-in-current-shape.ts) on templates and apply
 * journals stored as earlier versions stored them: a template record without its latest version's
 * bundle hash, and a tenant's resource id counters as items of their own rather than in its apply
 * journal. After the migration the data is in the shape this version reads, every read route
 * answers as before, publishing the same bundle again is still no new version and the next apply's
 * new resources get ids past those given; a migration stopped at any write and run again ends the same.
 */
import { PutCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { describe, expect, test } from 'vitest';
import { templatesInCurrentShape } from '#functions/core/migrations/templates-in-current-shape.ts';
import { db, getAll, getItem, tableName } from '#functions/core/store/dynamo.ts';
import * as stored from '#functions/core/store/entity-declarations.ts';
import { bundleHashOf } from '#functions/core/templates/template-repository.ts';
import { type IdCounter, idCounters } from '#functions/core/templates/tenant-resources.ts';
import { api, getOk, newClient, newTenant } from '#test/support/api.ts';
import { installFaultInjection } from '#test/support/faults.ts';
import { migrateWithin, stoppedAfterEachWrite } from '#test/support/migrations.ts';
import { publish, retailBundle } from '#test/support/templates.ts';

installFaultInjection();

type Item = Record<string, unknown> & { pk: string; sk: string };

/** A client with a template, and a tenant created with it (its apply gave the resource ids). */
async function world() {
  const client = await newClient();
  const templateId = await publish(client.token, retailBundle());
  const tenant = await newTenant(client.token, { templateId });
  const templateKey = stored.template.key({ clientId: client.clientId, templateId });
  const journalKey = stored.applyJournal.key({ tenantId: tenant.id });
  const counterKeys = idCounters.map((counter) => stored.tenantIdCounter.key({ tenantId: tenant.id, name: counter }));
  const journal = (await getItem<Item>(journalKey)) as Item;
  // The last id each counter gave: the retail template needs every one of them.
  const lastIds = Object.fromEntries(idCounters.map((counter) => [counter, journal[`lastId_${counter}`]])) as Record<
    IdCounter,
    number
  >;
  expect(Object.values(lastIds).every((lastId) => lastId > 0)).toBe(true);
  return { client, templateId, tenant, templateKey, journalKey, counterKeys, lastIds };
}

type World = Awaited<ReturnType<typeof world>>;

/** What the read routes show of the template and the tenant. */
async function readAll({ client, templateId, tenant }: World) {
  const read = async (path: string, token: string) => {
    const answer = await getOk(path, token);
    return { body: answer.body, etag: answer.headers.get('etag') };
  };
  return {
    templates: await read('/tenants/templates', client.token),
    template: await read(`/tenants/templates/${templateId}`, client.token),
    tenant: await read('/tenant', tenant.token),
  };
}

/**
 * Stores the world as an earlier version did: the template's record without its hash, and the
 * tenant's counters as items. `startedInJournal`: the counters an apply of the release before had
 * already started in the journal from their items, which stayed behind (one id lower here, so the
 * journal's value is the one that counts).
 */
async function storeAsEarlierVersion(world: World, startedInJournal: readonly IdCounter[] = []) {
  const { templateKey, journalKey, tenant, lastIds } = world;
  await db().send(new UpdateCommand({ TableName: tableName(), Key: templateKey, UpdateExpression: 'REMOVE bundleHash' }));
  for (const counter of idCounters) {
    const value = startedInJournal.includes(counter) ? lastIds[counter] - 1 : lastIds[counter];
    const item = { ...stored.tenantIdCounter.key({ tenantId: tenant.id, name: counter }), value };
    await db().send(new PutCommand({ TableName: tableName(), Item: item }));
  }
  const moved = idCounters.filter((counter) => !startedInJournal.includes(counter));
  await db().send(
    new UpdateCommand({
      TableName: tableName(),
      Key: journalKey,
      UpdateExpression: `REMOVE ${moved.map((_, index) => `#c${index}`).join(', ')}`,
      ExpressionAttributeNames: Object.fromEntries(moved.map((counter, index) => [`#c${index}`, `lastId_${counter}`])),
    }),
  );
}

/** The world's items the migration's Scan finds: the record and the counter items. */
const oldItems = async ({ templateKey, counterKeys }: World) => getAll<Item>([templateKey, ...counterKeys]);

/** The world's client and tenant partitions: where the migration finds its items. */
const partitionsOf = ({ templateKey, journalKey }: World) => [templateKey.pk, journalKey.pk];

/** The record has its hash, the journal every counter at the id it last gave, and no counter item is left. */
async function expectCurrentShape({ templateKey, journalKey, counterKeys, lastIds }: World) {
  expect((await getItem<Item>(templateKey))?.bundleHash).toBe(bundleHashOf(retailBundle()));
  const journal = (await getItem<Item>(journalKey)) as Item;
  for (const counter of idCounters) expect(journal[`lastId_${counter}`], counter).toBe(lastIds[counter]);
  expect(await getAll(counterKeys)).toEqual([]);
}

/** Publishing the latest bundle again is no new version, and the next apply's new table gets the next table id. */
async function expectPublishAndApplyAsBefore({ client, templateId, tenant, lastIds }: World) {
  const again = await api('PUT', `/tenants/templates/${templateId}`, { token: client.token, body: retailBundle() });
  expect(again.body.data).toEqual({ id: templateId, nome: 'Retail', version: 1 });
  const next = retailBundle();
  next.tables = [
    ...(next.tables ?? []),
    { key: 'returns', nome: 'Returns', desk: 'sales', columns: [{ column_name: 'id', data_type: 'integer', label: 'Id' }] },
  ];
  expect((await api('PUT', `/tenants/templates/${templateId}`, { token: client.token, body: next })).body.data.version).toBe(2);
  expect((await api('POST', '/tenant/templates/apply', { token: tenant.token, body: { templateId } })).status).toBe(200);
  const tables = (await api('GET', '/tenant', { token: tenant.token })).body.data.desks[0].tables as Array<{
    key: string;
    id: number;
  }>;
  expect(tables.find((table) => table.key === 'returns')?.id).toBe(lastIds.table + 1);
}

describe('migration 3: templates and apply journals in the current shape', () => {
  test.each([
    ['every counter only as an item', [] as IdCounter[]],
    ['some counters already started in the journal, their items left behind', ['desk', 'column'] as IdCounter[]],
  ])(
    'data of an earlier version (%s) ends in the current shape, reads as before, and publishes and applies as before',
    async (_shape, startedInJournal) => {
      const current = await world();
      const reads = await readAll(current);
      await storeAsEarlierVersion(current, startedInJournal);
      const old = await oldItems(current);
      expect(await migrateWithin(templatesInCurrentShape, partitionsOf(current))).toBe(old.length);
      await expectCurrentShape(current);
      expect(await readAll(current)).toEqual(reads);
      await expectPublishAndApplyAsBefore(current);
    },
    60_000,
  );

  test('data in the current shape gives the migration nothing', async () => {
    const current = await world();
    expect(await migrateWithin(templatesInCurrentShape, partitionsOf(current))).toBe(0);
    await expectCurrentShape(current);
  });

  test('stopped at any write, the migration run again ends in the current shape with the same answers', async () => {
    const writes = await stoppedAfterEachWrite({
      prepare: async () => {
        const current = await world();
        const reads = await readAll(current);
        await storeAsEarlierVersion(current);
        return { current, reads, items: await oldItems(current) };
      },
      run: async ({ items }) => {
        for (const item of items) await templatesInCurrentShape.migrate(item);
      },
      check: async ({ current, reads }, after) => {
        await expectCurrentShape(current);
        expect(await readAll(current), after).toEqual(reads);
      },
      // Each case has data of its own.
      width: 4,
    });
    expect(writes).toBe(1 + 2 * idCounters.length);
  }, 300_000);
});
