/**
 * The quotas on what a tenant creates (users, datamarts, alerts, schedules) hold under concurrency:
 * each is a count in the tenant's partition that the creating transaction conditions on and the
 * deleting one takes off (functions/core/store/counts.ts), never read and then written. As in
 * quotas.test.ts, each runs against DynamoDB Local with a small maximum (the domain functions take
 * one; the routes pass the real limit): many creations at once at the edge give exactly the
 * maximum and a 409 naming it for the rest, deletions free room, and the count stays equal to what
 * is stored through deletions that run beside creations. (A tenant whose items an earlier version
 * wrote before the count was kept: migration-counts.test.ts.)
 */
import { describe, expect, test } from 'vitest';
import { deleteAlert, createAlert } from '#functions/core/alerts/alerts.ts';
import { findAlertCount } from '#functions/core/alerts/alert-repository.ts';
import { createDatamart, deleteDatamart } from '#functions/core/datamarts/datamarts.ts';
import { findDatamartCount, listDatamartRecords } from '#functions/core/datamarts/datamart-repository.ts';
import { findCount, listUsers } from '#functions/core/directory/directory-repository.ts';
import { createUser, deleteUser } from '#functions/core/directory/users.ts';
import { deleteSchedule, putSchedule } from '#functions/core/schedules/schedules.ts';
import { findScheduleCount } from '#functions/core/schedules/schedule-repository.ts';
import { ServiceError } from '#functions/core/errors.ts';
import { queryAll } from '#functions/core/store/dynamo.ts';
import * as stored from '#functions/core/store/entity-declarations.ts';
import { unrecorded } from '#functions/core/store/resumable.ts';
import { scheduleFile, tenantWithFlows } from '#test/support/schedules.ts';

/** A tenant id of its own: users, datamarts and alerts need no tenant item. */
const freshTenant = () => 2_000_000_000 + Math.floor(Math.random() * 1_000_000_000);
const at = <T>(count: number, make: (index: number) => Promise<T>) =>
  Promise.all(Array.from({ length: count }, (_, index) => make(index)));

/** What a creation came to: its id, or the code of its refusal. */
async function outcome(creation: Promise<number>): Promise<number | string> {
  try {
    return await creation;
  } catch (error) {
    if (error instanceof ServiceError) return `${error.status} ${error.code}: ${error.message}`;
    throw error;
  }
}

/** The ids among the outcomes, and how many of each refusal. */
function split(outcomes: ReadonlyArray<number | string>) {
  const ids = outcomes.filter((entry): entry is number => typeof entry === 'number');
  const refusals: Record<string, number> = {};
  for (const entry of outcomes) if (typeof entry === 'string') refusals[entry] = (refusals[entry] ?? 0) + 1;
  return { ids, refusals };
}

/** One kind of thing a tenant creates, as these tests drive it. */
interface Kind {
  /** A tenant to create in. */
  tenant: () => Promise<{ tenantId: number; flowId?: number }>;
  /** Creates one (at most `max` for the tenant), `index` telling it apart; its id. */
  create: (tenant: { tenantId: number; flowId?: number }, index: number, max: number) => Promise<number>;
  remove: (tenantId: number, id: number) => Promise<void>;
  /** The ids stored. */
  stored: (tenantId: number) => Promise<number[]>;
  /** The tenant's count. */
  count: (tenantId: number) => Promise<number>;
  /** The refusal past `max`, as `outcome` reads it. */
  refusal: (max: number) => string;
}

const kinds: Record<string, Kind> = {
  users: {
    tenant: async () => ({ tenantId: freshTenant() }),
    create: async ({ tenantId }, index, max) =>
      (await createUser(tenantId, { login: `user-${index}@quota.io`, nome: `User ${index}` }, unrecorded(), max)).userId,
    remove: deleteUser,
    stored: async (tenantId) => (await listUsers(tenantId, undefined, undefined)).items.map((user) => user.userId),
    count: (tenantId) => findCount(tenantId, 'USERS'),
    refusal: (max) => `409 user_limit: A tenant has at most ${max} users`,
  },
  datamarts: {
    tenant: async () => ({ tenantId: freshTenant() }),
    create: async ({ tenantId }, index, max) =>
      (await createDatamart(tenantId, { nome: `Datamart ${index}`, tables: [], owners: [] }, unrecorded(), max)).id,
    remove: deleteDatamart,
    stored: async (tenantId) =>
      (await listDatamartRecords(tenantId, undefined, undefined)).items.map((datamart) => datamart.datamartId),
    count: findDatamartCount,
    refusal: (max) => `409 datamart_limit: A tenant has at most ${max} datamarts`,
  },
  alerts: {
    tenant: async () => ({ tenantId: freshTenant() }),
    create: async ({ tenantId }, index, max) =>
      (await createAlert(tenantId, { nome: `Alert ${index}`, channels: { webhook: false }, content: [] }, unrecorded(), max)).id,
    remove: deleteAlert,
    stored: async (tenantId) =>
      (await queryAll<{ alertId: number }>(stored.tenant.partition({ tenantId }), stored.alert.keyPrefix({}))).map(
        (alert) => alert.alertId,
      ),
    count: findAlertCount,
    refusal: (max) => `409 alert_limit: A tenant has at most ${max} alerts`,
  },
  schedules: {
    // A schedule needs a live tenant and a flow of its own.
    tenant: async () => {
      const { tenant, flows } = await tenantWithFlows();
      return { tenantId: tenant.id, flowId: flows['load-orders'] as number };
    },
    // Schedule ids are the caller's: `index` is the id (1 and up), a new one each time.
    create: async ({ tenantId, flowId }, index, max) => {
      const id = 100 + index;
      return (await putSchedule(tenantId, id, scheduleFile(id, [flowId as number]), { actor: 'test', max })).record.scheduleId;
    },
    remove: (tenantId, id) => deleteSchedule(tenantId, id, undefined),
    stored: async (tenantId) =>
      (await queryAll<{ scheduleId: number }>(stored.tenant.partition({ tenantId }), stored.schedule.keyPrefix({}))).map(
        (schedule) => schedule.scheduleId,
      ),
    count: findScheduleCount,
    refusal: (max) => `409 schedule_limit: A tenant has at most ${max} schedules: replace or delete one`,
  },
};

describe.each(Object.keys(kinds))('%s per tenant', (name) => {
  const kind = kinds[name] as Kind;

  test('40 creations at once where 10 fit: exactly 10, the rest 409 naming the limit; deletions free as many places', async () => {
    const tenant = await kind.tenant();
    const { tenantId } = tenant;
    const first = split(await at(40, (index) => outcome(kind.create(tenant, index, 10))));
    expect(first.ids).toHaveLength(10);
    expect(first.refusals).toEqual({ [kind.refusal(10)]: 30 });
    expect((await kind.stored(tenantId)).sort()).toEqual([...first.ids].sort());
    expect(await kind.count(tenantId)).toBe(10);

    // Three deleted (each twice at once: the second finds it gone), then 20 more at once: three fit.
    const gone = first.ids.slice(0, 3);
    const deletions = await Promise.allSettled([...gone, ...gone].map((id) => kind.remove(tenantId, id)));
    expect(deletions.filter((deletion) => deletion.status === 'fulfilled')).toHaveLength(3);
    expect(await kind.count(tenantId)).toBe(7);
    const second = split(await at(20, (index) => outcome(kind.create(tenant, 100 + index, 10))));
    expect(second.ids).toHaveLength(3);
    expect(second.refusals).toEqual({ [kind.refusal(10)]: 17 });
    expect(await kind.count(tenantId)).toBe(10);
    expect(await kind.stored(tenantId)).toHaveLength(10);
  });

  test('deletions and creations at once, at the quota: the count ends equal to what is stored', async () => {
    const tenant = await kind.tenant();
    const { tenantId } = tenant;
    const { ids } = split(await at(10, (index) => outcome(kind.create(tenant, index, 10))));
    expect(ids).toHaveLength(10);
    const [created] = await Promise.all([
      at(25, (index) => outcome(kind.create(tenant, 200 + index, 10))),
      at(5, (index) => kind.remove(tenantId, ids[index] as number)),
    ]);
    const stored = await kind.stored(tenantId);
    expect(stored.length).toBeLessThanOrEqual(10);
    expect(stored).toHaveLength(5 + split(created).ids.length);
    expect(await kind.count(tenantId)).toBe(stored.length);
  });
});

describe('schedules: only a creation counts', () => {
  test('a replacement at the quota goes through, counting nothing; 30 PUTs of one new id at once count it once', async () => {
    const { tenant, flows } = await tenantWithFlows();
    const flowId = flows['load-orders'] as number;
    const put = (id: number, nome: string, max: number) =>
      putSchedule(
        tenant.id,
        id,
        { ...scheduleFile(id, [flowId]), body: { ...scheduleFile(id, [flowId]).body, nome } },
        {
          actor: 'test',
          max,
        },
      );
    const firsts = await at(30, (index) => outcome(put(1, `Race ${index}`, 3).then(({ record }) => record.scheduleId)));
    // One creates it; the others either replaced it after (200) or found it changed under them (409 concurrent_change).
    expect(split(firsts).ids.length).toBeGreaterThanOrEqual(1);
    expect(Object.keys(split(firsts).refusals).every((refusal) => refusal.startsWith('409 concurrent_change'))).toBe(true);
    expect(await findScheduleCount(tenant.id)).toBe(1);
    await put(2, 'Second', 3);
    await put(3, 'Third', 3);
    expect(await findScheduleCount(tenant.id)).toBe(3);
    const replaced = await put(2, 'Second, changed', 3);
    expect(replaced).toMatchObject({ created: false, record: { version: 2 } });
    await expect(outcome(put(4, 'Fourth', 3).then(({ record }) => record.scheduleId))).resolves.toBe(
      '409 schedule_limit: A tenant has at most 3 schedules: replace or delete one',
    );
    expect(await findScheduleCount(tenant.id)).toBe(3);
  });
});
