/**
 * Migration 6 (functions/core/migrations/permission-records-charged.ts) on permission records as
 * earlier versions stored them, without `charge` and on no subject's quota: after it every record
 * is charged and its subject charged the same (a user's `permBytes`, the tenant's
 * `COUNT#GROUPPERMBYTES`), a record whose subject is gone is deleted as its sweep would, and every
 * read route answers as before; stopped at any write and run again it ends the same.
 */
import { DeleteCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { describe, expect, test } from 'vitest';
import type { StoredPermission } from '#functions/core/datamarts/datamart-repository.ts';
import { permissionCharge } from '#functions/core/datamarts/effective-permissions.ts';
import { permissionRecordsCharged } from '#functions/core/migrations/permission-records-charged.ts';
import { maxGroupPermissionBytes } from '#functions/core/directory/quotas.ts';
import { db, getItem, putAll, queryAll, tableName } from '#functions/core/store/dynamo.ts';
import * as stored from '#functions/core/store/entity-declarations.ts';
import { api, newClient, newTenant } from '#test/support/api.ts';
import { type DatamartParty, populatedDatamart, readDatamartParty } from '#test/support/datamart-party.ts';
import { each } from '#test/support/each.ts';
import { installFaultInjection } from '#test/support/faults.ts';
import { migrateWithin, selectedBy, stoppedAfterEachWrite } from '#test/support/migrations.ts';
import { callRoute } from '#test/support/in-process.ts';
import { tablePermission } from '#test/support/permissions.ts';
import { publish, retailBundle } from '#test/support/templates.ts';

installFaultInjection();

type Item = Record<string, unknown> & { pk: string; sk: string };

/** The migration over the datamarts' collections, as its runner hands it what it selects there. */
const migrateDatamarts = (tenantId: number, datamartIds: readonly number[]) =>
  migrateWithin(
    permissionRecordsCharged,
    datamartIds.map((datamartId) => stored.datamart.partition({ tenantId, datamartId })),
  );

const groupBytesKey = (tenantId: number) => stored.tenantCount.key({ tenantId, name: 'GROUPPERMBYTES' });

const permissionItems = (tenantId: number, datamartId: number) =>
  queryAll<Item & StoredPermission>(stored.datamart.partition({ tenantId, datamartId }), stored.permission.keyPrefix({}));

/** The party's records, its user item and the tenant's group charge: what the migration writes. */
async function chargedState({ tenant, datamart, user }: DatamartParty) {
  return {
    records: await permissionItems(tenant.id, datamart),
    user: await getItem(stored.user.key({ tenantId: tenant.id, userId: user })),
    groupBytes: await getItem(groupBytesKey(tenant.id)),
  };
}

/** Takes each record's charge off it and off its subject, as if an earlier version had written it. */
async function unchargeRecords(tenantId: number, records: readonly StoredPermission[]) {
  for (const record of records) {
    await db().send(
      new UpdateCommand({ TableName: tableName(), Key: { pk: record.pk, sk: record.sk }, UpdateExpression: 'REMOVE charge' }),
    );
    const subject =
      record.subject === 'user'
        ? { Key: stored.user.key({ tenantId, userId: record.subjectId }), UpdateExpression: 'ADD permBytes :minus' }
        : {
            Key: groupBytesKey(tenantId),
            UpdateExpression: 'ADD #value :minus',
            ExpressionAttributeNames: { '#value': 'value' },
          };
    await db().send(
      new UpdateCommand({ TableName: tableName(), ...subject, ExpressionAttributeValues: { ':minus': -record.charge } }),
    );
  }
}

/**
 * The party (its user's records on every table, its group's on one) as the current version stores
 * it, what the read routes answer and the stored state; then everything put back as an earlier
 * version left it: no record charged, and a user and a group deleted, each with a record their
 * sweep has not reached yet.
 */
async function earlierParty() {
  const party = await populatedDatamart();
  const { tenant, token, datamart, tables } = party;
  const groupPermissions = [tablePermission(tables[1] as number, { allowed: false })];
  await api('PUT', `/tenant/datamart/${datamart}/group/${party.group}`, { token, body: { permissions: groupPermissions } });
  const reads = await readDatamartParty(party);
  const charged = await chargedState(party);

  const gone = {
    user: (await api('POST', '/tenant/users', { token, body: { login: 'bo@x.io', nome: 'Bo' } })).body.data.id as number,
    group: (await api('POST', '/tenant/groups', { token, body: { nome: 'Gone' } })).body.data.id as number,
  };
  const permissions = [tablePermission(tables[0] as number)];
  await api('PUT', `/tenant/datamart/${datamart}/user/${gone.user}`, { token, body: { permissions } });
  await api('PUT', `/tenant/datamart/${datamart}/group/${gone.group}`, { token, body: { permissions } });
  await unchargeRecords(tenant.id, await permissionItems(tenant.id, datamart));
  for (const key of [
    stored.user.key({ tenantId: tenant.id, userId: gone.user }),
    stored.group.key({ tenantId: tenant.id, groupId: gone.group }),
  ]) {
    await db().send(new DeleteCommand({ TableName: tableName(), Key: key }));
  }
  const uncharged = await permissionItems(tenant.id, datamart);
  expect(uncharged).toHaveLength(tables.length + 3);
  expect(uncharged.filter((record) => 'charge' in record)).toEqual([]);
  return { party, reads, charged, uncharged };
}

describe('migration 6: permission records charged', () => {
  test('records an earlier version never charged end charged, their subjects charged the same, those of a subject gone deleted, and every read route answers as before', async () => {
    const { party, reads, charged, uncharged } = await earlierParty();
    expect(await migrateDatamarts(party.tenant.id, [party.datamart])).toBe(uncharged.length);
    const state = await chargedState(party);
    expect(state).toEqual(charged);
    for (const record of state.records) expect(record.charge).toBe(permissionCharge(record.datamartId, record));
    expect(await readDatamartParty(party)).toEqual(reads);
    // It selects only uncharged records: once they are charged, nothing.
    expect(
      await selectedBy(
        permissionRecordsCharged,
        stored.datamart.partition({ tenantId: party.tenant.id, datamartId: party.datamart }),
      ),
    ).toEqual([]);
  }, 120_000);

  test('stopped at any write and run again, it ends in the same state with the same answers', async () => {
    let uncharged = 0;
    const writes = await stoppedAfterEachWrite({
      prepare: earlierParty,
      run: async (each) => {
        uncharged = each.uncharged.length;
        for (const record of each.uncharged) await permissionRecordsCharged.migrate(record);
      },
      check: async ({ party, reads, charged }, after) => {
        expect(await chargedState(party), after).toEqual(charged);
        expect(await readDatamartParty(party), after).toEqual(reads);
      },
      // Each case has data of its own.
      width: 4,
    });
    // One commit a record, and a delete more for each of the two whose subject is gone.
    expect(writes).toBe(uncharged + 2);
  }, 600_000);
});

/** Fifty filters of 1,000-character values on `column`, unlike any other record's (`tag`). */
const bigFilters = (column: string, tag: string) =>
  Array.from({ length: 50 }, (_, index) => ({ column, operator: '=', value: `${tag}-${index}-`.padEnd(1000, 'v') }));

describe('data written before the quotas', () => {
  test('a user whose group records (written uncharged, straight to the table) make them 11 MB alone: a 400 at once on every route, before the migration and after, which charges the tenant past its quota', async () => {
    const client = await newClient();
    const tenant = await newTenant(client.token, { templateId: await publish(client.token, retailBundle()) });
    const { token } = tenant;
    const tenantId = tenant.id;
    const get = (path: string) => callRoute({ method: 'GET', path, token });
    const newUser = async (login: string) =>
      (await api('POST', '/tenant/users', { token, body: { login, nome: login } })).body.data.id as number;
    // The heavy user first: the first page of users is theirs.
    const heavy = await newUser('heavy');
    const light = await newUser('light');
    const groups = await each(
      20,
      async (index) => (await api('POST', '/tenant/groups', { token, body: { nome: `G${index}` } })).body.data.id as number,
    );
    await each(groups.length, (index) => api('PUT', `/tenant/groups/${groups[index]}/members/${heavy}`, { token }));
    const table = (await api('GET', '/tenant', { token })).body.data.desks[0].tables[0].id as number;
    const datamarts = await each(
      11,
      async (index) =>
        (await api('POST', '/tenant/datamart', { token, body: { nome: `D${index}`, tables: [table], owners: [] } })).body.data
          .id as number,
    );
    await putAll(
      datamarts.flatMap((datamartId) =>
        groups.map((groupId) => {
          const facets = { tenantId, datamartId, subject: 'group', subjectId: groupId, tableId: table } as const;
          return {
            ...stored.permission.key(facets),
            ...stored.permission.indexEntry(facets),
            tenantId,
            datamartId,
            subject: 'group',
            subjectId: groupId,
            ...tablePermission(table, { filters: bigFilters('order_id', `g${groupId}`) }),
          };
        }),
      ),
    );

    const answers = async () => {
      const alone = await get(`/tenant/users/${heavy}`);
      expect({ status: alone.status, code: alone.body.code }).toEqual({ status: 400, code: 'answer_too_large' });
      const page = await get('/tenant/users?limit=1');
      expect({ status: page.status, code: page.body.code }).toEqual({ status: 400, code: 'answer_too_large' });
      // Not "send a smaller limit" when 1 is the smallest: the item alone is too large, and it says whose.
      expect(page.body.message).toMatch(new RegExp(`user ${heavy} alone is`));
      expect(page.body.message).not.toMatch(/smaller limit/);
      const whole = await get('/tenant/users');
      expect({ status: whole.status, code: whole.body.code }).toEqual({ status: 400, code: 'answer_too_large' });
      // The other users still read.
      const other = await get(`/tenant/users/${light}`);
      expect(other.status).toBe(200);
      // Each answer but its request id, which is every request's own.
      return [alone, page, whole, other].map(({ status, body: { requestId: _id, ...body } }) => ({ status, body }));
    };
    const before = await answers();

    expect(await migrateDatamarts(tenantId, datamarts)).toBe(datamarts.length * groups.length);
    expect(await answers()).toEqual(before);
    const charges = (await Promise.all(datamarts.map((datamartId) => permissionItems(tenantId, datamartId)))).flat();
    expect(charges).toHaveLength(datamarts.length * groups.length);
    for (const record of charges) expect(record.charge).toBe(permissionCharge(record.datamartId, record));
    const total = charges.reduce((sum, record) => sum + record.charge, 0);
    expect(total).toBeGreaterThan(maxGroupPermissionBytes);
    expect((await getItem<{ value: number }>(groupBytesKey(tenantId)))?.value).toBe(total);
    // Past its quota now that they count: no group record grows until the tenant is under it.
    const group = (await api('POST', '/tenant/groups', { token, body: { nome: 'More' } })).body.data.id as number;
    const more = await api('PUT', `/tenant/datamart/${datamarts[0]}/group/${group}`, {
      token,
      body: { permissions: [tablePermission(table)] },
    });
    expect({ status: more.status, code: more.body.code }).toEqual({ status: 409, code: 'permission_limit' });
  }, 300_000);
});
