import { logger } from '../api/logger.ts';
import { count } from '../api/metrics.ts';
import { type FlowTargets, loadFlowTargets, startFlows } from '../reload/reload.ts';
import { getAll } from '../store/dynamo.ts';
import { keys } from '../store/keys.ts';
import type { TenantRecord } from '../tenants/tenant-repository.ts';
import {
  claimSlot,
  dueScheduleRecords,
  dueShards,
  finishRun,
  type ScheduleRecord,
  type ScheduleRunRecord,
  scheduleRunRetentionDays,
} from './schedule-repository.ts';
import { instantIn } from './instants.ts';
import { nextFire } from './trigger-engine.ts';

const minuteMs = 60_000;
/** DESIGN 7: after an outage only the latest missed slot fires, and only when less late than this. */
export const maxLatenessMs = 60 * minuteMs;
/** How many due schedules one tick works on at once. */
const parallelism = 8;

export type DispatchOutcome =
  'fired' | 'failed' | 'missed' | 'tenant_inactive' | 'tenant_gone' | 'already_fired' | 'schedule_changed';

export interface TickSummary {
  tick: string;
  due: number;
  outcomes: Partial<Record<DispatchOutcome, number>>;
}

/**
 * One dispatcher tick (EventBridge `rate(1 minute)`, or the twin's clock): finds the schedules due
 * at `now` through the sharded next-fire index (so the cost follows the due schedules, not all of
 * them), and handles each one. One schedule's failure does not stop the others.
 */
export async function dispatchDueSchedules(now = Date.now()): Promise<TickSummary> {
  const tick = Math.floor(now / minuteMs) * minuteMs;
  const tickIso = new Date(tick).toISOString();
  const shards = Array.from({ length: dueShards }, (_, shard) => shard);
  const due = (await Promise.all(shards.map((shard) => dueScheduleRecords(shard, tickIso)))).flat();
  const tenantIds = [...new Set(due.map((record) => record.tenantId))];
  const tenants = new Map(
    (await getAll<TenantRecord>(tenantIds.map((tenantId) => keys.tenant(tenantId)))).map((tenant) => [tenant.tenantId, tenant]),
  );
  // A tenant's flows, connections and agents are read once per tick, however many of its schedules are due.
  const targets = new Map<number, Promise<FlowTargets>>();
  const targetsOf = (tenantId: number) => {
    const loaded = targets.get(tenantId) ?? loadFlowTargets(tenantId);
    targets.set(tenantId, loaded);
    return loaded;
  };
  const outcomes: TickSummary['outcomes'] = {};
  const pending = [...due];
  const worker = async () => {
    for (let record = pending.shift(); record; record = pending.shift()) {
      const outcome = await dispatchSchedule(record, tenants.get(record.tenantId), tick, targetsOf).catch((error: unknown) => {
        logger.error('Dispatching a schedule failed', {
          tenantId: record.tenantId,
          scheduleId: record.scheduleId,
          error: error as Error,
        });
        return 'failed' as const;
      });
      outcomes[outcome] = (outcomes[outcome] ?? 0) + 1;
    }
  };
  await Promise.all(Array.from({ length: Math.min(parallelism, due.length) }, worker));
  const summary = { tick: tickIso, due: due.length, outcomes };
  if (due.length > 0) logger.info('Dispatcher tick', { ...summary });
  return summary;
}

/**
 * The latest slot of `record` that is due at `tick` and less than an hour late (undefined when
 * every missed slot is older), and the first slot after `tick`, which becomes the next fire.
 */
export function slotsAt(record: ScheduleRecord, tick: number): { fire?: number; next?: number } {
  const { triggers, timezone } = record.file.body;
  const storedNext = Date.parse(record.nextFireAt ?? '');
  // Slots before the stored next fire were dealt with already; slots an hour late or more never fire.
  let after = Math.max(storedNext - 1, tick - maxLatenessMs);
  let fire: number | undefined;
  for (let slot = nextFire(triggers, timezone, after); slot !== undefined; slot = nextFire(triggers, timezone, after)) {
    if (slot > tick) return { fire, next: slot };
    fire = slot;
    after = slot;
  }
  return { fire };
}

async function dispatchSchedule(
  record: ScheduleRecord,
  tenant: TenantRecord | undefined,
  tick: number,
  targetsOf: (tenantId: number) => Promise<FlowTargets>,
): Promise<DispatchOutcome> {
  const { fire, next } = slotsAt(record, tick);
  const nextFireAt = next === undefined ? undefined : new Date(next).toISOString();
  const context = { tenantId: record.tenantId, scheduleId: record.scheduleId };
  if (!tenant || tenant.deletedAt) {
    // A deleted tenant's schedules leave the index for good.
    const outcome = await claimSlot(record, undefined, undefined);
    return outcome === 'schedule_changed' ? outcome : 'tenant_gone';
  }
  if (!tenant.ativo || fire === undefined) {
    const outcome = await claimSlot(record, undefined, nextFireAt);
    if (outcome === 'schedule_changed') return outcome;
    if (tenant.ativo) logger.warn('Schedule slot missed by an hour or more; not fired', { ...context, slot: record.nextFireAt });
    return tenant.ativo ? 'missed' : 'tenant_inactive';
  }
  const { timezone } = record.file.body;
  const slot = instantIn(fire, timezone);
  const run: ScheduleRunRecord = {
    tenantId: record.tenantId,
    scheduleId: record.scheduleId,
    slot: slot.utc,
    slotLocal: slot.local,
    firedAt: new Date().toISOString(),
    scheduleVersion: record.version,
    status: 'firing',
    flows: [],
    expiresAt: Math.floor(Date.now() / 1000) + scheduleRunRetentionDays * 24 * 3600,
  };
  const claim = await claimSlot(record, run, nextFireAt);
  if (claim === 'already_fired' || claim === 'schedule_changed') return claim;
  try {
    const batchId = `schedule-${record.tenantId}-${record.scheduleId}-${fire / minuteMs}`;
    const requested = record.file.body.flows.map((flow) => ({ flowId: flow.flow_etl_id, context: flow.context }));
    const flows = await startFlows(tenant, requested, batchId, targetsOf(tenant.tenantId));
    await finishRun(run, { status: 'fired', flows });
    count('ScheduleFires');
    logger.info('Schedule fired', { ...context, slot: slot.utc, flows: flows.length });
    return 'fired';
  } catch (error) {
    // The slot stays claimed (a slot fires at most once); the run says why nothing was queued.
    await finishRun(run, { status: 'failed', flows: [], error: 'The flows could not be queued; see the service logs' });
    throw error;
  }
}
