/**
 * The rollout worker's part: works one running rollout, under its lease, until its invocation's
 * deadline. It first writes the rollout's tenants (its plan, a page at a time), then runs its waves:
 * each tenant of the wave is applied under its own apply lock and rules, a few at a time, and its
 * outcome commits in the same transaction as the apply's last write (or as the tenant's pending
 * mark), conditioned on the tenant's target still pending. So a crash at any point, or two copies of
 * the message, never apply a tenant twice: what committed is seen by the next step, which goes on
 * from the record and the targets as they are.
 */
import { randomUUID } from 'node:crypto';
import { ServiceError } from '#functions/core/errors.ts';
import { logger } from '#functions/core/observability/logger.ts';
import { requestReload } from '#functions/core/reload/reload.ts';
import type { ReloadItem } from '#functions/core/reload/plan.ts';
import { getItem } from '#functions/core/store/dynamo.ts';
import * as stored from '#functions/core/store/entity-declarations.ts';
import { type AlongsideName, transaction } from '#functions/core/store/transaction.ts';
import { applyTemplate } from '#functions/core/templates/apply.ts';
import { listFleetPage, memberPending } from '#functions/core/templates/fleet-repository.ts';
import { findTenant, markRolloutPending, type TenantRecord } from '#functions/core/tenants/tenant-repository.ts';
import {
  countTurnAttempt,
  findRollout,
  loadWave,
  markReloadQueued,
  putTargets,
  releaseRolloutLease,
  type RolloutRecord,
  type RolloutTarget,
  takeRolloutLease,
  targetOutcome,
  updateRollout,
} from './rollout-repository.ts';
import {
  addCounts,
  changeWithEvents,
  countOutcomes,
  finishedEvent,
  pausedEvent,
  type RolloutMessage,
  rolloutCounts,
} from './rollouts.ts';

/** Tenants applied at once within a wave. */
export const tenantsInParallel = 10;
/** Targets written per page of the plan. */
const planPageSize = 100;
/**
 * No batch of tenants starts later than this before the invocation's deadline (half the time it had,
 * when it had less than twice this): an apply takes its tenant's lock until that deadline, and a
 * large one takes seconds.
 */
const batchMarginMs = 20_000;
/** A tenant whose turn must wait is tried again after this long, in the same invocation when it has the time. */
const retryTurnMs = 5_000;
/**
 * A tenant's turn waits (its own apply, provisioning or activation under way; an error of the store)
 * at most this many times, about five minutes, then fails with the last reason: one tenant cannot
 * hold its wave for ever.
 */
export const maxTurnAttempts = 60;

/** What the message does next: nothing (the rollout ended, paused, or another worker has it), or come back later. */
export type RolloutStep = { kind: 'done' } | { kind: 'later'; delaySeconds: number };

const done: RolloutStep = { kind: 'done' };
const laterBy = (ms: number): RolloutStep => ({ kind: 'later', delaySeconds: Math.max(0, Math.ceil(ms / 1000)) });

/** Works the rollout named by `message` until `deadline` (epoch ms). */
export async function runRollout(message: RolloutMessage, deadline: number): Promise<RolloutStep> {
  const leaseId = randomUUID();
  const leased = await takeRolloutLease(message, leaseId, deadline);
  if (!leased) {
    const current = await findRollout(message.rolloutId);
    if (current?.state !== 'running') return done;
    // Another copy of the message has it: this one comes back when that worker's lease ends.
    return laterBy(Math.max(1000, (current.leaseUntil ?? 0) - Date.now()));
  }
  let record = leased;
  const stopAt = deadline - Math.min(batchMarginMs, (deadline - Date.now()) / 2);
  try {
    for (;;) {
      if (Date.now() > stopAt) return laterBy(0);
      // Paused or cancelled meanwhile (a change of the record this worker's write lost to): it stops here.
      if (record.state !== 'running') return done;
      if (record.planCursor !== null) {
        record = await planPage(record, leaseId);
        continue;
      }
      const wait = (record.nextWaveAt ?? 0) - Date.now();
      // A short wait (a tenant's turn tried again) is taken here, a long one (a pause between waves) off the worker.
      if (wait > 0 && Date.now() + wait > stopAt) return laterBy(wait);
      if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
      const next = await runWave(record, leaseId, { deadline, stopAt });
      if (!next) return done;
      if (next.state !== 'running') return done;
      record = next;
    }
  } finally {
    await releaseRolloutLease(record, leaseId);
  }
}

/** The worker's own change of the record: only while it holds the lease and the rollout runs. */
const leaseHeld = (leaseId: string) => ({
  condition: 'leaseId = :leaseId AND #state = :running',
  values: { ':leaseId': leaseId, ':running': 'running' },
});

/** Re-reads the record after a change that did not commit (a pause or a cancellation came first). */
const reread = async (record: RolloutRecord) =>
  (await findRollout(record.rolloutId)) ?? { ...record, state: 'cancelled' as const };

/**
 * Writes the next page of the rollout's tenants, each in its wave, and moves the plan's cursor past
 * them (conditioned on the count as read: a page written again after a crash writes the same targets).
 */
async function planPage(record: RolloutRecord, leaseId: string): Promise<RolloutRecord> {
  const { tenantIds, next } = await nextPlanPage(record);
  const planned = record.planned + tenantIds.length;
  await putTargets(
    tenantIds.map((tenantId, index) => ({
      rolloutId: record.rolloutId,
      tenantId,
      wave: Math.floor((record.planned + index) / record.waveSize),
      outcome: 'pending',
      expiresAt: record.expiresAt,
    })),
  );
  const lastPage = next === null;
  const set: Partial<RolloutRecord> = { planned, planCursor: next, updatedAt: new Date().toISOString() };
  // The fleet as planned is the rollout's (tenants created or deleted while it was counted and paged).
  if (lastPage) Object.assign(set, { total: planned, waves: Math.ceil(planned / record.waveSize) });
  if (lastPage && planned === 0) Object.assign(set, { state: 'finished', finishedAt: set.updatedAt });
  const { condition, values } = leaseHeld(leaseId);
  const written = await updateRollout(
    record,
    { set, condition: `${condition} AND planned = :planned`, values: { ...values, ':planned': record.planned } },
    [],
    lastPage && planned === 0,
  );
  return written ? { ...record, ...set } : reread(record);
}

async function nextPlanPage(record: RolloutRecord): Promise<{ tenantIds: number[]; next: string | null }> {
  if (record.selection === 'all') {
    const page = await listFleetPage(record.clientId, record.templateId, {
      limit: planPageSize,
      cursor: record.planCursor || undefined,
    });
    return { tenantIds: page.items.map((member) => member.tenantId), next: page.nextCursor };
  }
  const start = Number(record.planCursor || 0);
  const end = start + planPageSize;
  return { tenantIds: record.selection.slice(start, end), next: end < record.selection.length ? String(end) : null };
}

/**
 * Runs the current wave's pending tenants, a batch at a time, until none is pending (then the wave
 * finishes), the deadline nears, or the rollout stops running (paused, by the integrator or its
 * failure budget, or cancelled). Answers the record as it is then (undefined: nothing more to do now).
 */
async function runWave(
  start: RolloutRecord,
  leaseId: string,
  { deadline, stopAt }: { deadline: number; stopAt: number },
): Promise<RolloutRecord | undefined> {
  let record = start;
  if (record.waveStartedAt === undefined) {
    const set = { waveStartedAt: new Date().toISOString() };
    record = (await updateRollout(record, { set, ...leaseHeld(leaseId) })) ? { ...record, ...set } : await reread(record);
    if (record.state !== 'running') return record;
  }
  const targets = await loadWave(record.rolloutId, record.wave);
  await queueLeftReloads(record, targets);
  const pending = targets.filter((target) => target.outcome === 'pending');
  if (pending.length === 0) return finishWave(record, targets, leaseId);

  const outcomes = new Map(targets.map((target) => [target.tenantId, target.outcome]));
  let deferred = 0;
  for (let index = 0; index < pending.length; index += tenantsInParallel) {
    if (Date.now() > stopAt) return record;
    const fresh = await findRollout(record.rolloutId);
    if (fresh?.state !== 'running' || fresh.leaseId !== leaseId) return undefined;
    record = fresh;
    const batch = pending.slice(index, index + tenantsInParallel);
    const results = await Promise.all(batch.map((target) => stepTenant(record, target, deadline)));
    batch.forEach((target, position) => {
      const outcome = results[position];
      if (outcome) outcomes.set(target.tenantId, outcome);
      else deferred++;
    });
    const counts = rolloutCounts(
      record,
      [...outcomes.values()].map((outcome) => ({ outcome }) as RolloutTarget),
    );
    if (record.failureBudget !== null && counts.failed - record.budgetFrom >= record.failureBudget) {
      await changeWithEvents(
        record,
        pausedEvent(record, 'failure_budget'),
        (alongside) =>
          updateRollout(
            record,
            {
              set: { state: 'paused', pauseReason: 'failure_budget', updatedAt: new Date().toISOString() },
              ...leaseHeld(leaseId),
            },
            alongside,
          ),
        counts,
      );
      return undefined;
    }
  }
  // Tenants whose turn must wait (their own apply running, say) are tried again shortly.
  if (deferred > 0) return { ...record, nextWaveAt: Date.now() + retryTurnMs };
  return record;
}

/**
 * The wave is over: its counts join the rollout's, and the next wave waits for the pause (or the
 * rollout finishes, and the template may have another), with the events, together.
 */
async function finishWave(record: RolloutRecord, targets: readonly RolloutTarget[], leaseId: string): Promise<RolloutRecord> {
  const now = new Date().toISOString();
  const waveCounts = countOutcomes(targets);
  const last = record.wave + 1 >= record.waves;
  const set: Partial<RolloutRecord> = {
    counts: addCounts(record.counts, waveCounts),
    finishedWaves: [
      ...record.finishedWaves,
      { wave: record.wave, startedAt: record.waveStartedAt ?? now, finishedAt: now, counts: waveCounts },
    ],
    wave: record.wave + 1,
    updatedAt: now,
    ...(last ? { state: 'finished' as const, finishedAt: now } : {}),
    ...(!last && record.pauseSeconds > 0 ? { nextWaveAt: Date.parse(now) + record.pauseSeconds * 1000 } : {}),
  };
  const after = { ...record, ...set };
  const counts = rolloutCounts(after, []);
  const { condition, values } = leaseHeld(leaseId);
  const written = await changeWithEvents(
    record,
    (counted) => [
      {
        type: 'rollout.wave_finished',
        data: {
          templateId: record.templateId,
          rolloutId: record.rolloutId,
          version: record.version,
          wave: record.wave + 1,
          waves: record.waves,
          counts: counted,
        },
      },
      ...(last ? [finishedEvent(record, 'finished', counted)] : []),
    ],
    (alongside) =>
      updateRollout(
        record,
        {
          set,
          remove: ['waveStartedAt', ...(last || record.pauseSeconds === 0 ? (['nextWaveAt'] as const) : [])],
          condition: `${condition} AND wave = :wave`,
          values: { ...values, ':wave': record.wave },
        },
        alongside,
        last,
      ),
    counts,
  );
  return written ? ({ ...after, waveStartedAt: undefined } as RolloutRecord) : reread(record);
}

/**
 * One tenant's turn: its outcome (committed), or undefined when its turn must wait (its own apply is
 * running, it is being provisioned or activated right now): the wave tries it again.
 */
async function stepTenant(
  record: RolloutRecord,
  target: RolloutTarget,
  deadline: number,
): Promise<RolloutTarget['outcome'] | undefined> {
  const tenant = await findTenant(target.tenantId);
  if (!tenant || tenant.deletedAt || tenant.clientId !== record.clientId) {
    return fail(record, target, null, { code: 'tenant_not_found', message: 'Tenant not found' });
  }
  const applied = tenant.appliedTemplate?.templateId === record.templateId ? tenant.appliedTemplate.version : null;
  if (applied === record.version && !tenant.pendingTemplate) {
    return committed(
      transaction<'rolloutTarget'>().include([targetOutcome(target, 'unchanged', { fromVersion: applied })]),
      'unchanged',
    );
  }
  if (!tenant.ativo) return leavePending(record, target, tenant, applied);
  try {
    let plan: ReloadItem[] = [];
    await applyTemplate(tenant.tenantId, record.templateId, {
      deadline,
      version: record.version,
      // Without a reload, the tables to reload stay pending for the tenant's next apply's plan.
      keepPlanPending: !record.reload,
      alongside: (made) => {
        plan = made;
        return [
          targetOutcome(target, 'applied', {
            fromVersion: applied,
            reloadPlan: made,
            ...(record.reload ? { reloadQueued: false } : {}),
          }),
        ];
      },
    });
    if (record.reload) await queueReload({ ...target, reloadPlan: plan });
    return 'applied';
  } catch (error) {
    if (error instanceof ServiceError && !waitsItsTurn.has(error.code)) {
      return fail(record, target, applied, { code: error.code, message: error.message });
    }
    // Its turn waits: the tenant is busy, or the store failed (throttled, unreachable) and the apply stopped.
    const reason =
      error instanceof ServiceError
        ? { code: error.code, message: error.message }
        : { code: 'internal_error', message: 'The apply failed unexpectedly, again and again (the logs have it)' };
    if (!(error instanceof ServiceError)) {
      logger.warn("A rollout's apply failed unexpectedly; the tenant's turn is tried again", {
        rolloutId: record.rolloutId,
        tenantId: target.tenantId,
        error: error as Error,
      });
    }
    if ((await countTurnAttempt(target)) < maxTurnAttempts) return undefined;
    return fail(record, target, applied, reason);
  }
}

/** Refusals that pass: the tenant's own apply, provisioning or (de)activation is under way. */
const waitsItsTurn = new Set(['apply_in_progress', 'tenant_provisioning', 'tenant_inactive', 'concurrent_change']);

async function committed(tx: ReturnType<typeof transaction<'rolloutTarget'>>, outcome: RolloutTarget['outcome']) {
  await tx.commit();
  // Not written: another copy of the step recorded the tenant first; what it recorded stands.
  return outcome;
}

/**
 * An inactive tenant keeps the version pending until its activation applies it (as a tenant
 * created inactive does): its pending template, its place in the fleet and its outcome, together.
 */
async function leavePending(record: RolloutRecord, target: RolloutTarget, tenant: TenantRecord, applied: number | null) {
  const marked = await markRolloutPending(tenant, { templateId: record.templateId, version: record.version }, [
    memberPending({
      tenantId: tenant.tenantId,
      clientId: tenant.clientId,
      templateId: record.templateId,
      templateVersion: applied ?? 0,
    }),
    targetOutcome(target, 'pending_activation', { fromVersion: applied }),
  ]);
  return marked ? 'pending_activation' : undefined;
}

/** The tenant's turn failed: its outcome and the integrator's event, together. */
async function fail(
  record: RolloutRecord,
  target: RolloutTarget,
  fromVersion: number | null,
  error: { code: string; message: string },
): Promise<'failed'> {
  await changeWithEvents(
    record,
    () => [
      {
        type: 'tenant.apply_failed',
        data: {
          tenantId: target.tenantId,
          templateId: record.templateId,
          version: record.version,
          rolloutId: record.rolloutId,
          error,
        },
      },
    ],
    async (alongside) =>
      (
        await transaction<AlongsideName>()
          .include([targetOutcome(target, 'failed', { fromVersion, error }), ...alongside])
          .commit()
      ).written,
    rolloutCounts(record, []),
  );
  return 'failed';
}

/** Applied tenants whose reload plan was not queued yet (the worker stopped between the two). */
async function queueLeftReloads(record: RolloutRecord, targets: readonly RolloutTarget[]): Promise<void> {
  const left = targets.filter((target) => target.outcome === 'applied' && target.reloadQueued === false);
  for (const target of left) {
    const full = await getItem<RolloutTarget>(stored.rolloutTarget.key(target));
    if (full) await queueReload(full);
  }
  if (left.length > 0)
    logger.info("Queued the reloads a rollout's stopped step left", { rolloutId: record.rolloutId, tenants: left.length });
}

/**
 * Queues an applied tenant's reload plan, as POST /tenant/templates/reload would, under a batch id
 * of the rollout and tenant: queued again after a crash, SQS and the reload worker's markers keep
 * its loads single. A refusal (the tenant deactivated meanwhile, say) is recorded on the tenant's
 * outcome; its tables then wait for its next apply.
 */
async function queueReload(target: RolloutTarget): Promise<void> {
  const plan = target.reloadPlan ?? [];
  try {
    if (plan.length > 0) await requestReload(target.tenantId, plan, `rollout-${target.rolloutId}-${target.tenantId}`);
    await markReloadQueued(target, undefined);
  } catch (error) {
    if (!(error instanceof ServiceError)) throw error;
    await markReloadQueued(target, error.message);
  }
}
