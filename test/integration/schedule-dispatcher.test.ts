/**
 * The dispatcher over the real pieces (DynamoDB Local, fauxqs, the reload worker, the agent API),
 * ticked at instants the tests choose. They are in 2020, before any schedule the other tests
 * create with the real clock could be due, so each tick here sees only this file's schedules.
 */
import { describe, expect, test } from 'vitest';
import { findSchedule, listScheduleRuns } from '../../functions/core/schedules/schedule-repository.ts';
import { putSchedule } from '../../functions/core/schedules/schedules.ts';
import type { ScheduleFile, Trigger } from '../../functions/core/schedules/schedule-types.ts';
import { dispatchDueSchedules } from '../../functions/core/schedules/dispatcher.ts';
import { api } from '../support/api.ts';
import { scheduleFile, tenantWithFlows } from '../support/schedules.ts';
import { agentToken, eventually } from '../support/templates.ts';

const at = (iso: string) => Date.parse(iso);
/** When each test's schedule is written: the first fires follow. */
const written = at('2020-06-01T00:00:00Z');

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

const daily: Trigger[] = [{ type: 'Day', start_when: '06:30' }];
// 06:30 in São Paulo (UTC-03:00).
const dailySlot = '2020-06-01T09:30:00.000Z';

describe('schedule dispatcher', () => {
  test('two overlapping ticks fire a slot once; the next fire moves to the next day', async () => {
    const schedule = await scheduled(daily);
    expect(await schedule.nextFireAt()).toBe(dailySlot);
    const tick = at(dailySlot) + 5_000;
    const [first, second] = await Promise.all([dispatchDueSchedules(tick), dispatchDueSchedules(tick)]);
    expect((first.outcomes.fired ?? 0) + (second.outcomes.fired ?? 0)).toBe(1);
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
    await dispatchDueSchedules(tick + 30_000);
    expect(await schedule.runs()).toHaveLength(1);
  });

  test('a fired schedule queues its flows to the agent, which picks them up with its heartbeat', async () => {
    const schedule = await scheduled(daily);
    await dispatchDueSchedules(at(dailySlot));
    const [run] = await schedule.runs();
    expect(run?.flows).toEqual(schedule.flowIds.map((flowId) => ({ flowId, context: 'full', tokenId: 1, status: 'enqueued' })));
    const loads = await eventually(async () => {
      const answer = await api('POST', '/agent/heartbeat', { token: schedule.agent });
      return answer.body.data.runs.length === 2 ? answer.body.data.runs : undefined;
    });
    expect(loads.map((load: { flowId: number }) => load.flowId).sort()).toEqual([...schedule.flowIds].sort());
  });

  test('an offline agent makes the flows skipped_offline, recorded in the run', async () => {
    const schedule = await scheduled(daily, { online: false });
    await dispatchDueSchedules(at(dailySlot));
    const [run] = await schedule.runs();
    expect(run?.status).toBe('fired');
    expect(run?.flows.map((flow) => flow.status)).toEqual(['skipped_offline', 'skipped_offline']);
  });

  test('after a 3-hour outage a daily slot does not fire late; the next fire is the next day', async () => {
    const schedule = await scheduled(daily);
    const summary = await dispatchDueSchedules(at(dailySlot) + 3 * 3600_000);
    expect(summary.outcomes.missed).toBe(1);
    expect(await schedule.runs()).toEqual([]);
    expect(await schedule.nextFireAt()).toBe('2020-06-02T09:30:00.000Z');
  });

  test('after a 3-hour outage an hourly schedule fires only its latest slot, the one under an hour late', async () => {
    const hourly: Trigger[] = [
      { type: 'Hour', period: 1, start_when: '2020-01-01T00:00', start_time: '00:00', end_time: '23:00' },
    ];
    const schedule = await scheduled(hourly);
    expect(await schedule.nextFireAt()).toBe('2020-06-01T01:00:00.000Z');
    await dispatchDueSchedules(at('2020-06-01T03:20:00Z'));
    expect((await schedule.runs()).map((run) => run.slot)).toEqual(['2020-06-01T03:00:00.000Z']);
    expect(await schedule.nextFireAt()).toBe('2020-06-01T04:00:00.000Z');
  });

  test("an inactive tenant's schedule does not fire but moves on; a deleted tenant's leaves the index", async () => {
    const schedule = await scheduled(daily);
    await api('POST', `/tenants/${schedule.tenant.id}/deactivate`, { token: schedule.client.token });
    await dispatchDueSchedules(at(dailySlot));
    expect(await schedule.runs()).toEqual([]);
    expect(await schedule.nextFireAt()).toBe('2020-06-02T09:30:00.000Z');

    await api('DELETE', '/tenants', { token: schedule.client.token, body: { id: schedule.tenant.id } });
    const summary = await dispatchDueSchedules(at('2020-06-02T09:30:00Z'));
    expect(summary.outcomes.tenant_gone).toBe(1);
    expect(await schedule.runs()).toEqual([]);
    expect(await schedule.nextFireAt()).toBeUndefined();
  });

  test('an inactive schedule is never due', async () => {
    const setup = await tenantWithFlows();
    const file = scheduleFile(1, [setup.flows['load-orders'] as number], daily);
    await putSchedule(setup.tenant.id, 1, { ...file, body: { ...file.body, ativo: false } }, { actor: 'test', now: written });
    expect((await findSchedule(setup.tenant.id, 1))?.nextFireAt).toBeUndefined();
    await dispatchDueSchedules(at(dailySlot));
    expect((await listScheduleRuns(setup.tenant.id, 1, 10, undefined)).items).toEqual([]);
  });
});
