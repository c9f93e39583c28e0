/**
 * Schedules: a burst of schedules due in the same minute (the tick lists them into the fire queue,
 * the twin's fire worker fires them), and how many next-fire computations the trigger engine makes
 * per second.
 */
import { GetQueueAttributesCommand, SQSClient } from '@aws-sdk/client-sqs';
import { dispatchDueSchedules } from '#functions/core/schedules/dispatcher.ts';
import { type ScheduleRecord, type ScheduleRunRecord, scheduleItem } from '#functions/core/schedules/schedule-repository.ts';
import type { Trigger } from '#functions/core/schedules/schedule-types.ts';
import { nextFire } from '#functions/core/schedules/trigger-engine.ts';
import { deleteAll, putAll, queryAll } from '#functions/core/store/dynamo.ts';
import * as stored from '#functions/core/store/entity-declarations.ts';
import type { Twin } from '#local/twin.ts';
import { countingRoundTrips, median } from './round-trips.ts';
import { twinData } from './twin-api.ts';

export interface BurstResult {
  due: number;
  fired: number;
  /** The tick: listing every due schedule into the fire queue. */
  tickMs: number;
  tickRoundTrips: number;
  messages: number;
  /** From the end of the tick until the fire queue is empty. */
  fireMs: number;
  /** DynamoDB and SQS requests of the tick and the fire workers together, per fired schedule. */
  dynamoPerFire: number;
  sqsPerFire: number;
  /** Fire time minus slot: the tick runs at the slot, as the EventBridge rule does. */
  latenessP50Ms: number;
  latenessP99Ms: number;
}

export interface EngineResult {
  trigger: string;
  perSecond: number;
}

/** Tenants the burst's schedules are spread over (the applied template gives each two flows). */
const burstTenants = 100;
/** Schedules present but not due (next fire in 2099): a tick must not read them. */
const notDueSchedules = 10_000;
const minuteMs = 60_000;
const day = 24 * 60 * minuteMs;

/** A schedule starting the flows (the bench template's two, unless told) once a day at `nextFireAt`'s time of day (UTC), due then. */
export function scheduleRecord(tenantId: number, scheduleId: number, nextFireAt: string, flowIds = [1, 2]): ScheduleRecord {
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
        flows: flowIds.map((flowId) => ({ flow_etl_id: flowId, context: 'full' })),
        triggers: [{ type: 'Day', start_when: nextFireAt.slice(11, 16) }],
      },
    },
  };
}

/**
 * Waits until the wall clock reaches `instant`. Timers keep their own clock: one may end a millisecond before
 * Date.now() reaches the instant, and a tick started then is in the minute before, where nothing is due yet.
 */
export async function untilInstant(instant: number): Promise<void> {
  while (Date.now() < instant) await new Promise((resolve) => setTimeout(resolve, instant - Date.now() + 1));
}

export const percentile = (values: readonly number[], share: number) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil(share * sorted.length) - 1)] ?? Number.NaN;
};

/**
 * Bursts of 100, 1,000 and 10,000 schedules due at the same minute, each starting two flows, over
 * 100 tenants whose agents are online, among 10,000 schedules not due. Each burst is due at a real
 * minute boundary; the bench ticks at that boundary, as the EventBridge rule would, and waits for the
 * fire queue to empty. Needs a twin without its clock, running the fire worker.
 */
export async function measureBursts(
  twin: Pick<Twin, 'url' | 'clientToken' | 'sqsEndpoint' | 'queueUrls'>,
  sizes = [100, 1_000, 10_000],
): Promise<BurstResult[]> {
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
  const tenants: Array<{ id: number; agent: string }> = [];
  for (let index = 0; index < burstTenants; index++) {
    const tenant = await twinData(twin, 'POST', '/tenants', twin.clientToken, {
      nome: `Bench schedules ${index}`,
      ativo: true,
      templateId: template.id,
    });
    const agent = await twinData(twin, 'POST', '/tenant/agents/1/token', tenant.token as string);
    tenants.push({ id: tenant.id as number, agent: agent.token as string });
  }
  const tenantOf = (index: number) => (tenants[index % tenants.length] as { id: number }).id;
  await putAll(
    Array.from({ length: notDueSchedules }, (_, index) =>
      scheduleItem(scheduleRecord(tenantOf(index), 1_000_000 + index, '2099-01-01T00:00:00.000Z')),
    ),
  );

  return countingRoundTrips(async (measure) => {
    const results: BurstResult[] = [];
    for (const [row, due] of sizes.entries()) {
      // The next minute boundary with time to write the burst first.
      const slot = Math.ceil((Date.now() + 30_000) / minuteMs) * minuteMs;
      const slotIso = new Date(slot).toISOString();
      const schedules = Array.from({ length: due }, (_, index) =>
        scheduleRecord(tenantOf(index), (row + 1) * 100_000 + index, slotIso),
      );
      await putAll(schedules.map(scheduleItem));
      // Agents are online for two minutes after a heartbeat.
      for (const tenant of tenants) await twinData(twin, 'POST', '/agent/heartbeat', tenant.agent);
      await untilInstant(slot);
      let messages = 0;
      const tick = await measure(async () => {
        messages = (await dispatchDueSchedules(Date.now(), { deadline: Date.now() + 45_000 })).messages;
      });
      const fire = await measure(() => fireQueueEmpty(twin));
      const runs = (
        await Promise.all(
          tenants.map((tenant) =>
            queryAll<ScheduleRunRecord>(stored.scheduleRun.partition({ tenantId: tenant.id }), stored.scheduleRun.keyPrefix({})),
          ),
        )
      )
        .flat()
        .filter((run) => run.slot === slotIso && run.status === 'fired');
      const lateness = runs.map((run) => Date.parse(run.firedAt) - slot);
      results.push({
        due,
        fired: runs.length,
        tickMs: tick.ms,
        tickRoundTrips: tick.roundTrips + tick.queueRequests,
        messages,
        fireMs: fire.ms,
        dynamoPerFire: (tick.roundTrips + fire.roundTrips) / runs.length,
        sqsPerFire: (tick.queueRequests + fire.queueRequests) / runs.length,
        latenessP50Ms: median(lateness),
        latenessP99Ms: percentile(lateness, 0.99),
      });
      await deleteAll(schedules.map((schedule) => stored.schedule.key(schedule)));
    }
    return results;
  });
}

/** Waits until the fire queue holds no message, visible or in flight: every schedule a tick sent was handled. */
export async function fireQueueEmpty(twin: Pick<Twin, 'sqsEndpoint' | 'queueUrls'>): Promise<void> {
  const sqs = new SQSClient({ endpoint: twin.sqsEndpoint });
  try {
    for (;;) {
      const { Attributes = {} } = await sqs.send(
        new GetQueueAttributesCommand({
          QueueUrl: twin.queueUrls.fire,
          AttributeNames: ['ApproximateNumberOfMessages', 'ApproximateNumberOfMessagesNotVisible'],
        }),
      );
      if (Number(Attributes.ApproximateNumberOfMessages) + Number(Attributes.ApproximateNumberOfMessagesNotVisible) === 0) return;
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  } finally {
    sqs.destroy();
  }
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
