/**
 * Migration 2 (functions/core/migrations/schedules-in-current-shape.ts), on schedules and runs
 * stored as earlier versions stored them: a next fire past the horizon (`+010000-01-01…`), a
 * due-index key without the turn, a run left `firing`. After the migration they are in the shape
 * this version reads, every read route answers as before (a `firing` run, outside the contract,
 * as `failed`), the migration's filter finds nothing more, a request's write made after the Scan
 * read an item is kept, and a migration stopped at any write and run again ends the same.
 *
 * The schedules fire only from 2099-06-01 (no other test ticks that late), and the `+010000-…`
 * next fires are stored without index entries: those would sort before every real instant, and
 * the ticks of the tests running beside this one would list them.
 */
import { PutCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { describe, expect, test } from 'vitest';
import { schedulesInCurrentShape, unrecordedFlows } from '#functions/core/migrations/schedules-in-current-shape.ts';
import { dueIndexEntry, putRuns, type ScheduleRunRecord } from '#functions/core/schedules/schedule-repository.ts';
import type { Trigger } from '#functions/core/schedules/schedule-types.ts';
import { db, getItem, tableName } from '#functions/core/store/dynamo.ts';
import * as stored from '#functions/core/store/entity-declarations.ts';
import { api, getOk } from '#test/support/api.ts';
import { installFaultInjection } from '#test/support/faults.ts';
import { migrateWithin, selectedBy, stoppedAfterEachWrite } from '#test/support/migrations.ts';
import { scheduleFile, tenantWithFlows } from '#test/support/schedules.ts';

installFaultInjection();

const pastHorizon = '+010000-01-01T00:00:00.000Z';
const firstFire = '2099-06-01T00:00:00.000Z';
const hourly = (start_when: string): Trigger => ({ type: 'Hour', period: 1, start_when, start_time: '00:00', end_time: '23:59' });
const sortable = (id: number) => String(id).padStart(12, '0');

/** The slots of the party's runs: the one left `firing` is older than the one that fired. */
const firingSlot = '2026-11-20T10:00:00.000Z';
const firedSlot = '2026-11-21T10:00:00.000Z';

type Party = Awaited<ReturnType<typeof tenantWithFlows>>;

const scheduleKey = (tenantId: number, scheduleId: number) => stored.schedule.key({ tenantId, scheduleId });
const runKey = (tenantId: number, slot: string) => stored.scheduleRun.key({ tenantId, scheduleId: 1, slot });

/**
 * A tenant with, in the current shape: schedule 1 (next fire 2099-06-01, stored again with the
 * earlier key), schedule 3 (the same triggers, stored again with a next fire past the horizon),
 * schedule 9 (the schedule an earlier version stored with next fire +010000-01-01: its start_when
 * lies past the horizon, which a PUT now refuses, so it is written here as this version would
 * store it, with no next fire), and schedule 1's fired run.
 */
async function party(): Promise<Party> {
  const created = await tenantWithFlows();
  const { tenant, flows } = created;
  for (const id of [1, 3, 9]) {
    const answer = await api('PUT', `/tenant/schedules/${id}`, {
      token: tenant.token,
      body: scheduleFile(id, [flows['load-orders'] as number], [hourly('2099-06-01T00:00Z')]),
    });
    expect(answer.status).toBe(201);
  }
  await db().send(
    new UpdateCommand({
      TableName: tableName(),
      Key: scheduleKey(tenant.id, 9),
      UpdateExpression: 'SET #file.#body.triggers = :triggers REMOVE nextFireAt, gsi1pk, gsi1sk',
      ExpressionAttributeNames: { '#file': 'file', '#body': 'body' },
      ExpressionAttributeValues: { ':triggers': [hourly('9999-12-31T23:30:00Z')] },
    }),
  );
  await putRuns([run(tenant.id, firedSlot, 'fired')]);
  return created;
}

function run(tenantId: number, slot: string, status: ScheduleRunRecord['status']): ScheduleRunRecord {
  return {
    tenantId,
    scheduleId: 1,
    slot,
    slotLocal: slot.replace('10:00:00.000Z', '07:00:00-03:00'),
    firedAt: slot,
    scheduleVersion: 1,
    status,
    flows: [],
    expiresAt: Math.floor(Date.now() / 1000) + 86_400,
  };
}

/** What every read route shows of the party's schedules. */
async function readAll({ tenant }: Party) {
  const data = async (path: string) => {
    const answer = await getOk(path, tenant.token);
    return { etag: answer.headers.get('etag'), data: answer.body.data };
  };
  const reads: Record<string, unknown> = { list: await data('/tenant/schedules') };
  for (const id of [1, 3, 9]) {
    reads[`schedule ${id}`] = await data(`/tenant/schedules/${id}`);
    reads[`next ${id}`] = await data(`/tenant/schedules/${id}/next`);
    reads[`runs ${id}`] = await data(`/tenant/schedules/${id}/runs`);
  }
  return reads;
}

/** Stores the party's schedules and a run of schedule 1 as earlier versions did. */
async function storeAsEarlierVersion({ tenant }: Party) {
  await db().send(
    new UpdateCommand({
      TableName: tableName(),
      Key: scheduleKey(tenant.id, 1),
      UpdateExpression: 'SET gsi1sk = :earlier',
      ExpressionAttributeValues: { ':earlier': `${firstFire}#${sortable(tenant.id)}#${sortable(1)}` },
    }),
  );
  for (const id of [3, 9]) {
    await db().send(
      new UpdateCommand({
        TableName: tableName(),
        Key: scheduleKey(tenant.id, id),
        UpdateExpression: 'SET nextFireAt = :past REMOVE gsi1pk, gsi1sk',
        ExpressionAttributeValues: { ':past': pastHorizon },
      }),
    );
  }
  const firing = { ...runKey(tenant.id, firingSlot), ...run(tenant.id, firingSlot, 'failed'), status: 'firing' };
  await db().send(new PutCommand({ TableName: tableName(), Item: firing }));
}

/** The party's items the migration's filter selects, in key order (what its Scan hands it). */
const oldShapeItems = (tenantId: number) => selectedBy(schedulesInCurrentShape, stored.schedule.partition({ tenantId }));

/** The party's schedules and runs are in the shape this version reads. */
async function expectCurrentShape({ tenant }: Party) {
  for (const id of [1, 3]) {
    const item = await getItem<Record<string, unknown>>(scheduleKey(tenant.id, id));
    expect(item, `schedule ${id}`).toMatchObject({ nextFireAt: firstFire, ...dueIndexEntry(tenant.id, id, firstFire) });
  }
  const none = await getItem<Record<string, unknown>>(scheduleKey(tenant.id, 9));
  expect(none).toHaveProperty('version', 1);
  for (const attribute of ['nextFireAt', 'gsi1pk', 'gsi1sk']) expect(none).not.toHaveProperty(attribute);
  const marked = await getItem(runKey(tenant.id, firingSlot));
  expect(marked).toMatchObject({ status: 'failed', error: unrecordedFlows });
  expect(await oldShapeItems(tenant.id)).toEqual([]);
}

/** The reads of a party before its data was put back in the earlier shape, with the `firing` run as it now reads. */
function readsAfterMigration(before: Record<string, unknown>) {
  const runs = before['runs 1'] as { etag: string | null; data: unknown[] };
  const { tenantId: _tenant, scheduleId: _schedule, expiresAt: _expires, ...shown } = run(0, firingSlot, 'failed');
  return { ...before, 'runs 1': { ...runs, data: [...runs.data, { ...shown, error: unrecordedFlows }] } };
}

describe('migration 2: schedules in the current shape', () => {
  test('schedules and runs of earlier versions end in the current shape, and every read route answers as before', async () => {
    const schedules = await party();
    const before = await readAll(schedules);
    await storeAsEarlierVersion(schedules);
    expect((await oldShapeItems(schedules.tenant.id)).map((item) => item.sk)).toEqual([
      runKey(schedules.tenant.id, firingSlot).sk,
      ...[1, 3, 9].map((id) => scheduleKey(schedules.tenant.id, id).sk),
    ]);

    expect(await migrateWithin(schedulesInCurrentShape, [stored.schedule.partition({ tenantId: schedules.tenant.id })])).toBe(4);
    await expectCurrentShape(schedules);
    expect(await readAll(schedules)).toEqual(readsAfterMigration(before));
  });

  test("a request's write after the Scan read the item is kept", async () => {
    const schedules = await party();
    const { tenant, flows } = schedules;
    await storeAsEarlierVersion(schedules);
    const items = await oldShapeItems(schedules.tenant.id);
    expect(items).toHaveLength(4);

    // Edited (a new version, in the current shape), and the slot written again, since.
    for (const id of [1, 3]) {
      const edited = scheduleFile(id, [flows['load-orders'] as number], [hourly('2099-07-01T00:00Z')]);
      expect((await api('PUT', `/tenant/schedules/${id}`, { token: tenant.token, body: edited })).status).toBe(200);
    }
    await putRuns([run(tenant.id, firingSlot, 'fired')]);
    const changed = [scheduleKey(tenant.id, 1), scheduleKey(tenant.id, 3), runKey(tenant.id, firingSlot)];
    const written = await Promise.all(changed.map((key) => getItem(key)));

    for (const item of items) await schedulesInCurrentShape.migrate(item);
    expect(await Promise.all(changed.map((key) => getItem(key)))).toEqual(written);
    expect(written[0]).toMatchObject({ version: 2, nextFireAt: '2099-07-01T00:00:00.000Z' });
    expect(written[2]).toMatchObject({ status: 'fired' });
  });

  test('stopped at any write, then run again, it ends in the current shape with the same answers', async () => {
    let items = 0;
    const writes = await stoppedAfterEachWrite({
      prepare: async () => {
        const schedules = await party();
        const before = await readAll(schedules);
        await storeAsEarlierVersion(schedules);
        return { schedules, before, items: await oldShapeItems(schedules.tenant.id) };
      },
      run: async (each) => {
        items = each.items.length;
        for (const item of each.items) await schedulesInCurrentShape.migrate(item);
      },
      check: async ({ schedules, before }, after) => {
        await expectCurrentShape(schedules);
        expect(await readAll(schedules), after).toEqual(readsAfterMigration(before));
      },
      // Each case has data of its own.
      width: 4,
    });
    expect(writes).toBe(items);
  }, 240_000);
});
