import { type ClientEvent, clientEventWrites, noEvents } from '#functions/core/events/client-events.ts';
import { logger } from '#functions/core/observability/logger.ts';
import { count, duration } from '#functions/core/observability/metrics.ts';
import { type FlowStart, type FlowTargets, loadFlowTargets, startFlows } from '#functions/core/reload/reload.ts';
import { expiresAt } from '#functions/core/store/retention.ts';
import { findTenants, type TenantRecord } from '#functions/core/tenants/tenant-repository.ts';
import { instantIn, utcInstant } from './instants.ts';
import {
  advanceSchedule,
  type DueSchedule,
  findSchedules,
  putFailedRun,
  putRuns,
  scheduleKey,
  type ScheduleRecord,
  type ScheduleRunRecord,
} from './schedule-repository.ts';
import { fireSequence } from './trigger-engine.ts';

const minuteMs = 60_000;
/** DESIGN 7: after an outage only the latest missed slot fires, and only when less late than this. */
export const maxLatenessMs = 60 * minuteMs;

/** A fire-queue message: schedules one tick found due, and that tick's clock. */
export interface FireMessage {
  /** The tick's instant (ms): the slots due at its minute fire. */
  now: number;
  /** The wall clock (ms) when the tick started: the worker's instant is `now` plus the time elapsed since. */
  startedAt: number;
  schedules: DueSchedule[];
}

/** `moved_on`: fired by another message for the same slot, edited or deleted since the tick listed it. */
export type FireOutcome = 'fired' | 'missed' | 'tenant_inactive' | 'tenant_gone' | 'moved_on';

const isDueSchedule = (value: unknown): value is DueSchedule => {
  const due = value as Partial<DueSchedule> | null;
  return (
    typeof due === 'object' &&
    due !== null &&
    Number.isSafeInteger(due.tenantId) &&
    Number.isSafeInteger(due.scheduleId) &&
    typeof due.dueAt === 'string'
  );
};

/** A message that is not a fire message is a failure: retried, then left in the DLQ for an operator. */
export function parseFireMessage(body: string): FireMessage {
  const message = JSON.parse(body) as Partial<FireMessage> | null;
  if (
    !Number.isSafeInteger(message?.now) ||
    !Number.isSafeInteger(message?.startedAt) ||
    !Array.isArray(message?.schedules) ||
    !message.schedules.every(isDueSchedule)
  ) {
    throw new Error('The message is not a fire message');
  }
  return message as FireMessage;
}

/** A tenant's flows, connections and agents, read once per worker invocation however many of its schedules fire. */
export type FlowTargetsCache = Map<number, Promise<FlowTargets>>;

/**
 * Fires the schedules of one fire-queue message, in three steps, each for all of them at once:
 * 1. reads them and their tenants (a BatchGetItem each) and queues the flows of those that fire;
 * 2. writes their runs (BatchWriteItem);
 * 3. moves each schedule on from the next fire the tick saw (a conditional UpdateItem: the claim).
 * A worker that dies anywhere, or whose flows could not be queued (a run `failed` says so), loses
 * nothing: until step 3 the schedule is still due, so the message (or the next tick) comes back to
 * it until its slot is an hour late; its flows are queued again under the same deduplication ids,
 * made from the slot, which the reload queue and the reload worker both take once; its run is
 * written again under the same key. A message delivered twice, or a schedule listed by two ticks,
 * fires once: only one claim can move the schedule on from a slot. Throws when any schedule could
 * not be handled, after the others are done, so the message is retried.
 */
export async function fireDueSchedules(
  message: FireMessage,
  targets: FlowTargetsCache = new Map(),
): Promise<Partial<Record<FireOutcome, number>>> {
  const tick = Math.floor(message.now / minuteMs) * minuteMs;
  const clock = () => message.now + (Date.now() - message.startedAt);
  const [records, tenants] = await Promise.all([
    findSchedules(message.schedules),
    findTenants(message.schedules.map((due) => due.tenantId)),
  ]);
  const targetsOf = (tenantId: number) => {
    const cached = targets.get(tenantId);
    if (cached) return cached;
    const loaded = loadFlowTargets(tenantId);
    targets.set(tenantId, loaded);
    // A failed read is not kept: the tenant's other schedules, and the retry, read again.
    loaded.catch(() => targets.delete(tenantId));
    return loaded;
  };
  const errors: unknown[] = [];
  const failed = (due: DueSchedule) => (error: unknown) => {
    logger.error('Firing a schedule failed; its message will be retried', { ...scheduleOf(due), error: error as Error });
    errors.push(error);
    return undefined;
  };
  const plans = await Promise.all(
    message.schedules.map((due) =>
      planFire(due, records.get(scheduleKey(due)), tenants.get(due.tenantId), { tick, clock, targetsOf }).catch(failed(due)),
    ),
  );
  const planned = plans.filter((plan): plan is FirePlan => plan !== undefined);
  await putRuns(planned.flatMap((plan) => ('run' in plan && plan.run ? [plan.run] : [])));
  const outcomes: Partial<Record<FireOutcome, number>> = {};
  await Promise.all(
    planned.map(async (plan) => {
      const outcome = await claim(plan, clock).catch(failed(plan.due));
      if (outcome) outcomes[outcome] = (outcomes[outcome] ?? 0) + 1;
    }),
  );
  if (errors.length > 0) throw new AggregateError(errors, `${errors.length} of ${message.schedules.length} schedules failed`);
  return outcomes;
}

const scheduleOf = ({ tenantId, scheduleId }: Pick<DueSchedule, 'tenantId' | 'scheduleId'>) => ({ tenantId, scheduleId });

/**
 * The latest slot of `record` that is due at `tick` and less than an hour late (undefined when
 * every missed slot is older), and the first slot after `tick`, which becomes the next fire (none
 * past the horizon). One walk through the schedule's fires, each trigger parsed once.
 */
export function slotsAt(record: ScheduleRecord, tick: number): { fire?: number; next?: number } {
  const { triggers, timezone } = record.file.body;
  const storedNext = Date.parse(record.nextFireAt ?? '');
  // Slots before the stored next fire were dealt with already; slots an hour late or more never fire.
  let fire: number | undefined;
  for (const slot of fireSequence(triggers, timezone, Math.max(storedNext - 1, tick - maxLatenessMs))) {
    if (slot > tick) return { fire, next: slot };
    fire = slot;
  }
  return { fire };
}

interface FireContext {
  tick: number;
  /** The worker's instant, in the tick's reckoning. */
  clock: () => number;
  targetsOf: (tenantId: number) => Promise<FlowTargets>;
}

/** What firing one schedule comes to before its claim: the outcome if the claim succeeds, and what to write. */
type FirePlan =
  | { due: DueSchedule; outcome: 'moved_on' }
  | {
      due: DueSchedule;
      record: ScheduleRecord;
      outcome: Exclude<FireOutcome, 'moved_on'>;
      /** The next fire to move it on to; undefined takes it out of the due index. */
      nextFireAt: string | undefined;
      /** Present when it fires: its flows are queued, and the run says how. */
      run?: ScheduleRunRecord;
      fire?: number;
      /** The tenant's client, who hears of a slot that does not fire (none for a deleted tenant). */
      clientId?: number;
    };

async function planFire(
  due: DueSchedule,
  record: ScheduleRecord | undefined,
  tenant: TenantRecord | undefined,
  { tick, clock, targetsOf }: FireContext,
): Promise<FirePlan> {
  if (!record || record.nextFireAt !== due.dueAt) return { due, outcome: 'moved_on' };
  const { fire, next } = slotsAt(record, tick);
  const nextFireAt = next === undefined ? undefined : utcInstant(next);
  // A deleted tenant's schedules leave the index for good.
  if (!tenant || tenant.deletedAt) return { due, record, outcome: 'tenant_gone', nextFireAt: undefined };
  const { clientId } = tenant;
  if (!tenant.ativo) return { due, record, outcome: 'tenant_inactive', nextFireAt, clientId };
  if (fire === undefined || clock() - fire >= maxLatenessMs) return { due, record, outcome: 'missed', nextFireAt, clientId };
  const slot = instantIn(fire, record.file.body.timezone);
  const batchId = `schedule-${record.tenantId}-${record.scheduleId}-${fire / minuteMs}`;
  const requested = record.file.body.flows.map((flow) => ({ flowId: flow.flow_etl_id, context: flow.context }));
  const run = (status: ScheduleRunRecord['status'], flows: FlowStart[]): ScheduleRunRecord => ({
    tenantId: record.tenantId,
    scheduleId: record.scheduleId,
    slot: slot.utc,
    slotLocal: slot.local,
    firedAt: new Date().toISOString(),
    scheduleVersion: record.version,
    status,
    flows,
    expiresAt: expiresAt('runRetentionDays'),
  });
  try {
    const flows = await startFlows(tenant, requested, batchId, targetsOf(tenant.tenantId));
    return { due, record, outcome: 'fired', nextFireAt, run: run('fired', flows), fire, clientId };
  } catch (error) {
    // Not claimed: the slot is tried again (its flows under the same deduplication ids) until it is an
    // hour late. Meanwhile its run says so, unless another message fired it already.
    count('ScheduleFireFailures');
    await putFailedRun({ ...run('failed', []), error: 'The flows could not be queued yet; retrying' });
    throw error;
  }
}

/**
 * The integrator's `schedule.missed` event of a plan whose slots from the stored next fire on do not
 * all fire: none of them (an hour late, or the tenant inactive), or all but the latest (after an
 * outage, only the latest fires, when less than an hour late).
 */
export function missedSlotEvent(plan: Exclude<FirePlan, { outcome: 'moved_on' }>): ClientEvent | undefined {
  const { record, outcome, fire } = plan;
  const slot = record.nextFireAt;
  if (slot === undefined) return undefined;
  const common = { tenantId: record.tenantId, scheduleId: record.scheduleId, slot, nextFireAt: plan.nextFireAt ?? null };
  if (outcome === 'missed' || outcome === 'tenant_inactive') {
    const reason = outcome === 'missed' ? 'late' : 'tenant_inactive';
    return { type: 'schedule.missed', data: { ...common, reason, firedSlot: null } };
  }
  if (outcome === 'fired' && fire !== undefined && fire > Date.parse(slot)) {
    return { type: 'schedule.missed', data: { ...common, reason: 'superseded', firedSlot: utcInstant(fire) } };
  }
  return undefined;
}

/**
 * Moves the schedule on, with the integrator's event of the slots that did not fire, if any (sent
 * once: by the claim that moved the schedule on); a schedule that moved on meanwhile is `moved_on`
 * (its run, if any, was written all the same).
 */
async function claim(plan: FirePlan, clock: () => number): Promise<FireOutcome> {
  if (plan.outcome === 'moved_on') return 'moved_on';
  const event = missedSlotEvent(plan);
  const events = event && plan.clientId !== undefined ? await clientEventWrites(plan.clientId, [event]) : noEvents;
  if (!(await advanceSchedule(plan.record, plan.nextFireAt, events.items))) return 'moved_on';
  await events.afterCommit();
  if (plan.outcome === 'missed') {
    count('ScheduleMisses');
    logger.warn('Schedule slot missed by an hour or more; not fired', {
      ...scheduleOf(plan.record),
      slot: plan.record.nextFireAt,
    });
  }
  if (plan.outcome === 'fired' && plan.fire !== undefined) {
    count('ScheduleFires');
    duration('ScheduleFireLateness', clock() - plan.fire);
  }
  return plan.outcome;
}
