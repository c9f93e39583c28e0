/**
 * Schedules: the cost of one dispatcher tick as the number of schedules that are not due grows
 * (it should not), and how many next-fire computations the trigger engine makes per second.
 */
import { dispatchDueSchedules } from '../functions/core/schedules/dispatcher.ts';
import { type ScheduleRecord, scheduleItem } from '../functions/core/schedules/schedule-repository.ts';
import type { Trigger } from '../functions/core/schedules/schedule-types.ts';
import { nextFire } from '../functions/core/schedules/trigger-engine.ts';
import { deleteAll, putAll } from '../functions/core/store/dynamo.ts';
import { keys } from '../functions/core/store/keys.ts';
import type { Twin } from '../local/twin.ts';
import { twinData } from './twin-api.ts';
import { countingRoundTrips } from './round-trips.ts';

export interface TickResult {
  schedules: number;
  due: number;
  fired: number;
  ms: number;
  roundTrips: number;
}

export interface EngineResult {
  trigger: string;
  perSecond: number;
}

const tenantsWithDueSchedules = 10;
const dueSchedules = 100;
const day = 24 * 3600 * 1000;
const notDueAt = '2099-01-01T00:00:00.000Z';

function record(tenantId: number, scheduleId: number, nextFireAt: string): ScheduleRecord {
  return {
    tenantId,
    scheduleId,
    version: 1,
    minuteTriggers: false,
    nextFireAt,
    file: {
      header: { id: scheduleId },
      body: {
        nome: `Bench ${scheduleId}`,
        ativo: true,
        timezone: 'UTC',
        flows: [
          { flow_etl_id: 1, context: 'full' },
          { flow_etl_id: 2, context: 'full' },
        ],
        triggers: [{ type: 'Day', start_when: '00:00' }],
      },
    },
  };
}

/**
 * Ticks at 100, 1,000 and 10,000 schedules, 100 of them due each time (spread over 10 tenants
 * whose agents are online, two flows each). The twin must run without its clock.
 */
export async function measureDispatcherTicks(twin: Pick<Twin, 'url' | 'clientToken'>): Promise<TickResult[]> {
  const template = await twinData(twin, 'POST', '/tenants/templates', twin.clientToken, {
    nome: 'Bench schedules',
    connections: [{ key: 'db', nome: 'DB', kind: 'postgres' }],
    desks: [{ key: 'd', nome: 'D' }],
    tables: ['a', 'b'].map((key) => ({
      key,
      nome: key,
      desk: 'd',
      columns: [{ column_name: 'x', data_type: 'text', label: 'X' }],
    })),
    flows: ['a', 'b'].map((key) => ({ key, nome: key, connection: 'db', writes: [key], context: 'full' })),
  });
  const tenantIds: number[] = [];
  for (let index = 0; index < tenantsWithDueSchedules; index++) {
    const tenant = await twinData(twin, 'POST', '/tenants', twin.clientToken, {
      nome: `Bench schedules ${index}`,
      ativo: true,
      templateId: template.id,
    });
    const agent = await twinData(twin, 'POST', '/tenant/agents/1/token', tenant.token as string);
    await twinData(twin, 'POST', '/agent/heartbeat', agent.token as string);
    tenantIds.push(tenant.id as number);
  }
  const tenantOf = (index: number) => tenantIds[index % tenantIds.length] as number;

  return countingRoundTrips(async (measure) => {
    const results: TickResult[] = [];
    let notDue = 0;
    for (const [row, total] of [100, 1_000, 10_000].entries()) {
      const missing = total - dueSchedules - notDue;
      await putAll(
        Array.from({ length: missing }, (_, index) => scheduleItem(record(tenantOf(index), 100_000 + notDue + index, notDueAt))),
      );
      notDue += missing;
      // Each row's slot is on its own day, so the schedules fired before are not due again.
      const slot = Date.parse('2030-01-01T00:00:00Z') + row * 10 * day;
      const due = Array.from({ length: dueSchedules }, (_, index) =>
        record(tenantOf(index), 1_000 * (row + 1) + index, new Date(slot).toISOString()),
      );
      await putAll(due.map(scheduleItem));
      let fired = 0;
      const sample = await measure(async () => {
        fired = (await dispatchDueSchedules(slot + 30_000)).outcomes.fired ?? 0;
      });
      results.push({ schedules: total, due: dueSchedules, fired, ...sample });
      await deleteAll(due.map((schedule) => keys.schedule(schedule.tenantId, schedule.scheduleId)));
    }
    return results;
  });
}

/** Next-fire computations per second, per kind of trigger, from instants spread over 2027. */
export function measureTriggerEngine(iterations = 20_000): EngineResult[] {
  const cases: Array<{ trigger: string; timezone: string; triggers: Trigger[] }> = [
    { trigger: 'Day (America/New_York)', timezone: 'America/New_York', triggers: [{ type: 'Day', start_when: '02:30' }] },
    { trigger: 'Week (Europe/Berlin)', timezone: 'Europe/Berlin', triggers: [{ type: 'Week', period: 0, start_when: '02:30' }] },
    {
      trigger: 'Month 31 (Australia/Lord_Howe)',
      timezone: 'Australia/Lord_Howe',
      triggers: [{ type: 'Month', period: 31, start_when: '02:15' }],
    },
    {
      trigger: 'Hour window (Asia/Kathmandu)',
      timezone: 'Asia/Kathmandu',
      triggers: [{ type: 'Hour', period: 2, start_when: '2026-01-01T00:00', start_time: '22:00', end_time: '06:00' }],
    },
    {
      trigger: 'Minute window (America/Sao_Paulo)',
      timezone: 'America/Sao_Paulo',
      triggers: [{ type: 'Minute', period: 5, start_when: '2026-01-01T00:00', start_time: '08:00', end_time: '18:00' }],
    },
  ];
  const start = Date.parse('2027-01-01T00:00:00Z');
  const step = Math.floor((365 * day) / iterations);
  return cases.map(({ trigger, timezone, triggers }) => {
    const started = performance.now();
    for (let index = 0; index < iterations; index++) nextFire(triggers, timezone, start + index * step);
    return { trigger, perSecond: (iterations / (performance.now() - started)) * 1000 };
  });
}
