/**
 * The dispatcher over the real pieces: ticks list due schedules into the fire queue (fauxqs), the
 * twin's poller runs the fire worker on them, loads go through the reload queue and worker to the
 * agent API, all on DynamoDB Local. Ticks are at instants the tests choose, in 2020, before any
 * schedule the other tests create with the real clock could be due; this is the only file that
 * ticks the shared twin, so each tick sees only this file's schedules.
 */
import { describe, expect, test } from 'vitest';
import { dispatchSettings } from '#functions/core/schedules/dispatch-settings.ts';
import { dispatchDueSchedules, type TickOptions, type TickSummary } from '#functions/core/schedules/dispatcher.ts';
import {
  dispatchShardCount,
  type DueSchedule,
  findDispatchCursor,
  findSchedule,
  listScheduleRuns,
  type ScheduleRecord,
  scheduleItem,
  shardOf,
} from '#functions/core/schedules/schedule-repository.ts';
import { deleteAll, getItem, putAll } from '#functions/core/store/dynamo.ts';
import * as stored from '#functions/core/store/entity-declarations.ts';
import { putSchedule } from '#functions/core/schedules/schedules.ts';
import type { ScheduleFile, Trigger } from '#functions/core/schedules/schedule-types.ts';
import { api } from '#test/support/api.ts';
import { fireQueueDrained, scheduleFile, tenantWithFlows, withProbeFireQueue } from '#test/support/schedules.ts';
import { agentToken, eventually } from '#test/support/templates.ts';

const at = (iso: string) => Date.parse(iso);
/** When each test's schedule is written: the first fires follow. */
const written = at('2020-06-01T00:00:00Z');

/** A tick, then every message it sent handled by the twin's fire worker. */
async function tickAndFire(instant: number, options: Parameters<typeof dispatchDueSchedules>[1] = {}): Promise<TickSummary> {
  const summary = await dispatchDueSchedules(instant, options);
  await fireQueueDrained();
  return summary;
}

async function scheduled(triggers: Trigger[], options: { online?: boolean } = {}) {
  const setup = await tenantWithFlows();
  const agent = await agentToken(setup.tenant.token);
  // An agent is online for two minutes after a heartbeat.
  if (options.online !== false) await api('POST', '/agent/heartbeat', { token: agent });
  const flowIds = [setup.flows['load-orders'] as number, setup.flows['load-stock'] as number];
  const file: ScheduleFile = scheduleFile(1, flowIds, triggers);
  await putSchedule(setup.tenant.id, 1, file, { actor: 'test', now: written });
  const runs = async () => (await listScheduleRuns(setup.tenant.id, 1, 100, undefined)).items;
  const nextFireAt = async () => (await findSchedule(setup.tenant.id, 1))?.nextFireAt;
  return { ...setup, agent, flowIds, runs, nextFireAt };
}

/** The loads waiting for the agent (a heartbeat lists them until the agent reports on each), once there are `count`. */
async function loadsPickedUp(agent: string, count: number): Promise<Array<{ id: number; flowId: number }>> {
  return eventually(async () => {
    const answer = await api('POST', '/agent/heartbeat', { token: agent });
    return answer.body.data.runs.length >= count ? answer.body.data.runs : undefined;
  });
}

/**
 * `count` schedules of one tenant written at `writtenAt`, the triggers given in turn (schedule 1
 * the first, 2 the second…). The tenant's agent is online; each schedule starts one flow.
 */
async function burst(count: number, writtenAt: number, triggers: Trigger[]) {
  const setup = await tenantWithFlows();
  const agent = await agentToken(setup.tenant.token);
  await api('POST', '/agent/heartbeat', { token: agent });
  const ids = Array.from({ length: count }, (_, index) => index + 1);
  for (const id of ids) {
    const trigger = triggers[(id - 1) % triggers.length] as Trigger;
    await putSchedule(setup.tenant.id, id, scheduleFile(id, [setup.flows['load-orders'] as number], [trigger]), {
      actor: 'test',
      now: writtenAt,
    });
  }
  const runsOf = async (id: number) => (await listScheduleRuns(setup.tenant.id, id, 10, undefined)).items;
  return { ...setup, agent, ids, runsOf };
}

const shards = () => Array.from({ length: dispatchSettings().dueShards }, (_, shard) => shard);

const daily: Trigger[] = [{ type: 'Day', start_when: '06:30' }];
// 06:30 in São Paulo (UTC-03:00).
const dailySlot = '2020-06-01T09:30:00.000Z';

describe('schedule dispatcher', () => {
  test('two overlapping ticks fire a slot once; the next fire moves to the next day', async () => {
    const schedule = await scheduled(daily);
    expect(await schedule.nextFireAt()).toBe(dailySlot);
    const tick = at(dailySlot) + 5_000;
    // Both list the schedule: two messages for one slot.
    const [first, second] = await Promise.all([dispatchDueSchedules(tick), dispatchDueSchedules(tick)]);
    expect(first.listed).toBeGreaterThanOrEqual(1);
    expect(second.listed).toBeGreaterThanOrEqual(1);
    await fireQueueDrained();
    const runs = await schedule.runs();
    expect(runs).toHaveLength(1);
    expect(runs[0]).toMatchObject({
      slot: dailySlot,
      slotLocal: '2020-06-01T06:30:00-03:00',
      status: 'fired',
      scheduleVersion: 1,
    });
    expect(await schedule.nextFireAt()).toBe('2020-06-02T09:30:00.000Z');
    // A third tick in the same minute finds nothing due.
    expect((await tickAndFire(tick + 30_000)).listed).toBe(0);
    expect(await schedule.runs()).toHaveLength(1);
  });

  test('a fired schedule queues its flows to the agent, which picks them up with its heartbeat', async () => {
    const schedule = await scheduled(daily);
    await tickAndFire(at(dailySlot));
    const [run] = await schedule.runs();
    expect(run?.flows).toEqual(schedule.flowIds.map((flowId) => ({ flowId, context: 'full', tokenId: 1, status: 'enqueued' })));
    const loads = await loadsPickedUp(schedule.agent, 2);
    expect(loads.map((load) => load.flowId).sort()).toEqual([...schedule.flowIds].sort());
  });

  test('an offline agent makes the flows skipped_offline, recorded in the run', async () => {
    const schedule = await scheduled(daily, { online: false });
    await tickAndFire(at(dailySlot));
    const [run] = await schedule.runs();
    expect(run?.status).toBe('fired');
    expect(run?.flows.map((flow) => flow.status)).toEqual(['skipped_offline', 'skipped_offline']);
  });

  test('after a 3-hour outage a daily slot does not fire late; the next fire is the next day', async () => {
    const schedule = await scheduled(daily);
    await tickAndFire(at(dailySlot) + 3 * 3600_000);
    expect(await schedule.runs()).toEqual([]);
    expect(await schedule.nextFireAt()).toBe('2020-06-02T09:30:00.000Z');
  });

  test('after a 3-hour outage an hourly schedule fires only its latest slot, the one under an hour late', async () => {
    const hourly: Trigger[] = [
      { type: 'Hour', period: 1, start_when: '2020-01-01T00:00', start_time: '00:00', end_time: '23:00' },
    ];
    const schedule = await scheduled(hourly);
    expect(await schedule.nextFireAt()).toBe('2020-06-01T01:00:00.000Z');
    await tickAndFire(at('2020-06-01T03:20:00Z'));
    expect((await schedule.runs()).map((run) => run.slot)).toEqual(['2020-06-01T03:00:00.000Z']);
    expect(await schedule.nextFireAt()).toBe('2020-06-01T04:00:00.000Z');
  });

  test("an inactive tenant's schedule does not fire but moves on; a deleted tenant's leaves the index", async () => {
    const schedule = await scheduled(daily);
    await api('POST', `/tenants/${schedule.tenant.id}/deactivate`, { token: schedule.client.token });
    await tickAndFire(at(dailySlot));
    expect(await schedule.runs()).toEqual([]);
    expect(await schedule.nextFireAt()).toBe('2020-06-02T09:30:00.000Z');

    await api('DELETE', '/tenants', { token: schedule.client.token, body: { id: schedule.tenant.id } });
    await tickAndFire(at('2020-06-02T09:30:00Z'));
    expect(await schedule.runs()).toEqual([]);
    expect(await schedule.nextFireAt()).toBeUndefined();
  });

  test('an inactive schedule is never due', async () => {
    const setup = await tenantWithFlows();
    const file = scheduleFile(1, [setup.flows['load-orders'] as number], daily);
    await putSchedule(setup.tenant.id, 1, { ...file, body: { ...file.body, ativo: false } }, { actor: 'test', now: written });
    expect((await findSchedule(setup.tenant.id, 1))?.nextFireAt).toBeUndefined();
    await tickAndFire(at(dailySlot));
    expect((await listScheduleRuns(setup.tenant.id, 1, 10, undefined)).items).toEqual([]);
  });

  test('a redelivered fire message fires its slot once, and its loads reach the agent once', async () => {
    const schedule = await scheduled(daily);
    const due = { tenantId: schedule.tenant.id, scheduleId: 1, dueAt: dailySlot };
    const message = { now: at(dailySlot), startedAt: Date.now(), schedules: [due] };
    // What SQS does when a message is delivered twice, or a consumer loses its receipt.
    const { sendBatches } = await import('#functions/core/store/queues.ts');
    await sendBatches(
      'fire',
      [message, message].map((body) => ({ tenantId: schedule.tenant.id, body })),
    );
    await fireQueueDrained();
    expect(await schedule.runs()).toHaveLength(1);
    await loadsPickedUp(schedule.agent, 2);
    // A heartbeat a moment later still lists two: the second message queued nothing new.
    await new Promise((resolve) => setTimeout(resolve, 1_500));
    const later = await api('POST', '/agent/heartbeat', { token: schedule.agent });
    expect(later.body.data.runs.map((run: { flowId: number }) => run.flowId).sort()).toEqual([...schedule.flowIds].sort());
  });
});

describe('a burst of due schedules', () => {
  // Each test ticks first at its own instant, after the earlier tests' schedules moved on.
  const weekly = (period: number): Trigger => ({ type: 'Week', period, start_when: '08:00' });

  test('larger than a page: every schedule is listed once and fires once', async () => {
    const writtenAt = at('2020-07-01T00:00:00Z');
    // Wednesday 2020-07-01 08:00 in São Paulo.
    const slot = at('2020-07-01T11:00:00Z');
    await tickAndFire(slot);
    const schedules = await burst(40, writtenAt, [weekly(3)]);
    // Sent page by page (a first listing of one page), each page as it is read.
    const summary = await tickAndFire(slot + 2_000, { pageSize: 2, firstListing: 1 });
    expect(summary).toMatchObject({ listed: 40, continued: 0 });
    // A page of at most two schedules is one message: at least 20 of them.
    expect(summary.messages).toBeGreaterThanOrEqual(20);
    for (const id of schedules.ids) {
      const runs = await schedules.runsOf(id);
      expect(runs.map((run) => [run.slot, run.status])).toEqual([[new Date(slot).toISOString(), 'fired']]);
    }
    expect((await loadsPickedUp(schedules.agent, 40)).length).toBe(40);
  });

  test('a tick out of time leaves a cursor and the next continues after it, oldest first, until every due schedule is listed', async () => {
    const writtenAt = at('2020-07-08T00:00:00Z');
    const tick = at('2020-07-08T11:00:00Z');
    await tickAndFire(tick);
    // Two tenants with fifteen schedules each: odd ones due at 07:30 São Paulo (30 minutes late at
    // the tick), even ones at 08:00. A tenant's schedules with ids in one block share a shard.
    const twoSlots = [{ type: 'Week', period: 3, start_when: '07:30' } as const, weekly(3)];
    const tenants = [await burst(15, writtenAt, twoSlots), await burst(15, writtenAt, twoSlots)];
    const all = tenants.flatMap((set) => set.ids.map((scheduleId) => `${set.tenant.id}:${scheduleId}`));

    // The ticks send to a queue of the test's own, so what each listed can be read back, and nothing fires.
    const byShard = await withProbeFireQueue(async (sent) => {
      /** Per shard, what it listed until its listing first finished (its cursor gone). */
      const listed = new Map<number, DueSchedule[]>(shards().map((shard) => [shard, []]));
      const finished = new Set<number>();
      for (let round = 0; finished.size < shards().length; round++) {
        if (round === 20) throw new Error('The listing did not finish in 20 ticks');
        // A deadline already past: each shard lists one page of two, then saves where it stopped.
        const summary = await dispatchDueSchedules(tick + round * 1_000, { pageSize: 2, deadline: 0 });
        const cursors = await Promise.all(shards().map((shard) => findDispatchCursor(shard)));
        if (round === 0) {
          expect(summary.continued).toBeGreaterThan(0);
          expect(cursors.filter(Boolean)).toHaveLength(summary.continued);
        }
        for (const due of await sent()) {
          const shard = shardOf(due.tenantId, due.scheduleId);
          if (!finished.has(shard)) listed.get(shard)?.push(due);
        }
        cursors.forEach((cursor, shard) => {
          if (!cursor) finished.add(shard);
        });
      }
      // A tick with time enough finishes what the shards started again, and leaves no cursor. The next
      // starts from the oldest entry and sends again every schedule still due (these were never
      // fired), so none is lost with its message.
      await dispatchDueSchedules(tick + 30_000, { pageSize: 1000 });
      expect((await Promise.all(shards().map((shard) => findDispatchCursor(shard)))).filter(Boolean)).toEqual([]);
      expect((await dispatchDueSchedules(tick + 31_000, { pageSize: 1000 })).listed).toBe(30);
      await sent();
      return listed;
    });
    // Every due schedule listed once, across the shards' continued listings; in each shard, oldest first.
    const keysListed = [...byShard.values()].flat().map((due) => `${due.tenantId}:${due.scheduleId}`);
    expect([...keysListed].sort()).toEqual([...all].sort());
    for (const schedules of byShard.values()) {
      const dueAts = schedules.map((due) => due.dueAt);
      expect(dueAts).toEqual([...dueAts].sort());
    }

    await tickAndFire(tick + 40_000);
    for (const set of tenants) for (const id of set.ids) expect(await set.runsOf(id)).toHaveLength(1);
  });

  test('a shard that cannot be listed fails the tick only after the other shards have sent theirs', async () => {
    const writtenAt = at('2020-07-15T00:00:00Z');
    const tick = at('2020-07-15T11:00:00Z');
    await tickAndFire(tick);
    const schedules = await burst(2, writtenAt, [weekly(3)]);
    const ownShard = shardOf(schedules.tenant.id, 1);
    const brokenShard = (ownShard + 1) % shards().length;
    const { db } = await import('#functions/core/store/dynamo.ts');
    const queriesShard = (input: unknown, shard: number) => JSON.stringify(input).includes(`SCHEDULES#DUE#${shard}"`);
    db().middlewareStack.add(
      (next, context) => async (args) => {
        if (context.commandName === 'QueryCommand' && queriesShard(args.input, brokenShard)) {
          throw new Error('Simulated outage of one index shard');
        }
        // The tenant's shard answers late: a tick that gave up at the first failure would be gone by then.
        if (context.commandName === 'QueryCommand' && queriesShard(args.input, ownShard)) {
          await new Promise((resolve) => setTimeout(resolve, 300));
        }
        return next(args);
      },
      { step: 'initialize', name: 'brokenShard' },
    );
    try {
      const sentBeforeFailing = await withProbeFireQueue(async (sent) => {
        await expect(dispatchDueSchedules(tick + 1_000)).rejects.toThrow(/^1 of \d+ shards could not be listed$/);
        return sent();
      });
      expect(sentBeforeFailing.map((due) => due.scheduleId).sort()).toEqual(schedules.ids);
    } finally {
      db().middlewareStack.remove('brokenShard');
    }
    await tickAndFire(tick + 2_000);
    for (const id of schedules.ids) expect(await schedules.runsOf(id)).toHaveLength(1);
  });

  test('a lower dueShards loses nothing: ticks keep listing as many shards as any deployment wrote to', async () => {
    const configured = shards().length;
    const tick = at('2020-07-22T11:00:00Z');
    await tickAndFire(tick);
    const schedules = await burst(1, at('2020-07-22T00:00:00Z'), [weekly(3)]);
    // As a deployment with more shards left it: its index entry on a shard above the current count.
    const record = await findSchedule(schedules.tenant.id, 1);
    if (!record?.nextFireAt) throw new Error('the schedule has no next fire');
    const higherShard = configured + 3;
    await putAll([
      {
        ...scheduleItem(record),
        ...stored.schedule.indexEntry({
          shard: higherShard,
          nextFireAt: record.nextFireAt,
          turn: 1,
          tenantId: record.tenantId,
          scheduleId: 1,
        }),
      },
    ]);
    try {
      // That deployment raised the count it recorded; this one, configured lower, keeps it.
      expect(await dispatchShardCount(configured + 8)).toBe(configured + 8);
      expect(await dispatchShardCount(configured)).toBe(configured + 8);
      await tickAndFire(tick + 1_000);
      expect((await schedules.runsOf(1)).map((run) => run.status)).toEqual(['fired']);
      // Once fired, its entry moved to the shard this deployment computes.
      const moved = await getItem(stored.schedule.key({ tenantId: record.tenantId, scheduleId: 1 }));
      expect(moved?.nextFireAt).not.toBe(record.nextFireAt);
      expect(moved?.gsi1pk).toBe(stored.schedule.indexes.gsi1.partition({ shard: shardOf(record.tenantId, 1) }));
    } finally {
      await deleteAll([stored.dispatchShards.key({})]);
    }
  });

  test('a cursor left by a tick at a later instant does not apply to an earlier one: nothing before it is skipped', async () => {
    const { saveDispatchCursor, clearDispatchCursor } = await import('#functions/core/schedules/schedule-repository.ts');
    const tick = at('2020-07-29T11:00:00Z');
    await tickAndFire(tick);
    const schedules = await burst(1, at('2020-07-29T00:00:00Z'), [weekly(3)]);
    const shard = shardOf(schedules.tenant.id, 1);
    // Where a tick a day later stopped in this shard (the clock went back, or ticks ran out of order).
    await saveDispatchCursor(shard, `2020-07-30T11:00:00.000Z#${'9'.repeat(12)}`);
    try {
      const listed = await withProbeFireQueue(async (sent) => {
        await dispatchDueSchedules(tick + 1_000);
        return sent();
      });
      expect(listed).toContainEqual(expect.objectContaining({ tenantId: schedules.tenant.id, scheduleId: 1 }));
    } finally {
      await clearDispatchCursor(shard);
    }
    await tickAndFire(tick + 2_000);
    expect(await schedules.runsOf(1)).toHaveLength(1);
  });

  /**
   * A big tenant with 450 schedules due (ids 1 to 450, turns 1 to 450 of its block) and three small
   * tenants with two each (`smallIds`), all on one shard, due at `instant`, which no other test ticks at:
   * whether the tick (pages of 20) queues every small tenant's schedules before the big tenant's second
   * message (its 11th schedule).
   */
  async function smallQueuedFirst(instant: string, big: number, smallIds: [number, number], options: TickOptions = {}) {
    const small = Array.from({ length: 400 }, (_, index) => big + 1 + index)
      .filter((tenantId) => shardOf(tenantId, 1) === shardOf(big, 1))
      .slice(0, 3);
    expect(small).toHaveLength(3);
    const record = (tenantId: number, scheduleId: number): ScheduleRecord => ({
      tenantId,
      scheduleId,
      version: 1,
      minuteTriggers: false,
      nextFireAt: instant,
      file: scheduleFile(scheduleId, [1]),
    });
    const records = [
      ...Array.from({ length: 450 }, (_, index) => record(big, index + 1)),
      ...small.flatMap((tenantId) => smallIds.map((scheduleId) => record(tenantId, scheduleId))),
    ];
    await putAll(records.map(scheduleItem));
    try {
      return await withProbeFireQueue(async (sent) => {
        await dispatchDueSchedules(Date.parse(instant), { pageSize: 20, ...options });
        const ours = (await sent()).filter((due) => due.tenantId === big || small.includes(due.tenantId));
        expect(ours).toHaveLength(records.length);
        const bigSecondMessage = ours.filter((due) => due.tenantId === big)[10] as DueSchedule;
        const lastSmall = Math.max(...small.map((tenantId) => ours.findLastIndex((due) => due.tenantId === tenantId)));
        return lastSmall < ours.indexOf(bigSecondMessage);
      });
    } finally {
      await deleteAll(records.map((one) => stored.schedule.key({ tenantId: one.tenantId, scheduleId: one.scheduleId })));
    }
  }

  test("a tenant with hundreds due holds back no other on its shard: listed in turns, each tenant's first message queued first", async () => {
    // Page by page too (a first listing of one page): the small tenants' turns 1 and 2 are on the first page.
    expect(await smallQueuedFirst('2099-01-01T00:00:00.000Z', 900_001, [1, 2], { firstListing: 1 })).toBe(true);
  });

  test("a tenant listed pages after a big one's on its shard (its schedules' turns late) is still queued before the big one's second message", async () => {
    // Turns 480 and 481 come after all of the big tenant's, 23 pages of 20 into the shard.
    expect(await smallQueuedFirst('2099-01-02T00:00:00.000Z', 910_001, [480, 481])).toBe(true);
    // Listed page by page (a first listing of one page), the big tenant's pages went out first.
    expect(await smallQueuedFirst('2099-01-03T00:00:00.000Z', 920_001, [480, 481], { firstListing: 1 })).toBe(false);
  });
});
