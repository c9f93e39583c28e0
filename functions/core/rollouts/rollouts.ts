/**
 * Rollouts: a template version rolled out to the template's tenants (its fleet) in waves, by the
 * rollout worker (rollout-runner.ts), with a dry run, a failure budget, pause, resume and cancel,
 * and events for the integrator. docs/rollouts.md says how an integrator uses them.
 */
import type { CreateRolloutBody } from '#functions/core/api/validators/create-rollout.cjs';
import { answerBytes, maxAnswerBytes } from '#functions/core/api/whole-list.ts';
import { badRequest, conflict, type FieldError, notFound } from '#functions/core/errors.ts';
import { type ClientEvent, clientEventWrites } from '#functions/core/events/client-events.ts';
import { recordFollowUp, deleteFollowUp } from '#functions/core/follow-ups/follow-up-repository.ts';
import { logger } from '#functions/core/observability/logger.ts';
import { mapPage, nextId, type Page } from '#functions/core/store/dynamo.ts';
import { sendMessage } from '#functions/core/store/queues.ts';
import { type Resumable, unrecorded } from '#functions/core/store/resumable.ts';
import { expiresAt } from '#functions/core/store/retention.ts';
import type { Alongside } from '#functions/core/store/transaction.ts';
import { type ApplyPreview, previewApply, versionToApply } from '#functions/core/templates/apply.ts';
import { templateNotFound, templateVersionNotFound } from '#functions/core/templates/catalogue.ts';
import { findMembers, fleetSize, listFleetPage, type TemplateMember } from '#functions/core/templates/fleet-repository.ts';
import { findTemplate, type TemplateRecord } from '#functions/core/templates/template-repository.ts';
import { findTenants } from '#functions/core/tenants/tenant-repository.ts';
import {
  findRollout,
  insertRollout,
  listRolloutsPage,
  listTargetsPage,
  loadWave,
  noOutcomes,
  type Outcome,
  type OutcomeCounts,
  outcomes,
  type RolloutRecord,
  type RolloutTarget,
  updateRollout,
} from './rollout-repository.ts';

/** A rollout has at most this many waves: its record keeps each finished wave, and stays small. */
export const maxWaves = 100;
/**
 * A dry run describes this many tenants at most (each is its tenant's resources read whole), this
 * many at a time, and starts none within this long of the request's deadline.
 */
export const dryRunTenants = 100;
const dryRunParallelism = 10;
const dryRunMarginMs = 5_000;

export const rolloutNotFound = () => notFound('Rollout not found', 'rollout_not_found');

/** What the message on the rollout queue names (the client: its message group). */
export interface RolloutMessage {
  clientId: number;
  rolloutId: number;
}

// Starting one.

export type StartedRollout = { dryRun: DryRun } | { rollout: RolloutView };

/**
 * POST /tenants/templates/{id}/rollouts. Checks the template, the version and the tenants asked
 * for (each must be in the template's fleet: 400 naming those that are not), then either describes
 * what would happen (a dry run: nothing written) or starts the rollout: its record, the template's
 * mark of it (one running or paused rollout per template: 409 naming it) and the follow-up that
 * queues its first step commit together, with the request's answer; the step is then queued, by this
 * request or, if it stops, by the follow-up sweeper.
 */
export async function startRollout(
  clientId: number,
  templateId: number,
  request: CreateRolloutBody,
  deadline: number,
  resumable: Resumable<RolloutView> = unrecorded(),
): Promise<StartedRollout> {
  const template = await findTemplate(clientId, templateId);
  if (!template) throw templateNotFound();
  const version = request.version ?? template.latestVersion;
  if (version > template.latestVersion) throw templateVersionNotFound(version);
  const selection = request.tenants === 'all' ? 'all' : [...new Set(request.tenants)].sort((a, b) => a - b);
  const total = selection === 'all' ? await fleetSize(clientId, templateId) : (await checkSelection(template, selection)).length;
  if (total === 0)
    throw badRequest(
      'The template has no tenants to roll out to',
      [fieldError('/tenants', 'selects no tenant')],
      'validation_failed',
    );
  const waveSize = request.waveSize ?? Math.max(1, Math.ceil(total / 10));
  const waves = Math.ceil(total / waveSize);
  if (waves > maxWaves) {
    const smallest = Math.ceil(total / maxWaves);
    const message = `would make ${waves} waves of the ${total} tenants; at most ${maxWaves}: send a waveSize of at least ${smallest}`;
    throw badRequest(`waveSize ${message}`, [fieldError('/waveSize', message)], 'validation_failed');
  }
  if (request.dryRun) return { dryRun: await dryRun(template, version, selection, { total, waveSize, waves }, deadline) };

  const stale = await staleRolloutOf(template);
  const record = newRolloutRecord({
    clientId,
    templateId,
    rolloutId: await nextId('rollout'),
    version,
    selection,
    total,
    waveSize,
    waves,
    pauseSeconds: request.pauseSeconds ?? 0,
    failureBudget: request.failureBudget ?? null,
    reload: request.reload ?? false,
  });
  const view = describeRollout(record, []);
  const started = await insertRollout(record, stale, [recordFollowUp(queueing(record)), ...resumable.finish(view)]);
  if (!started) throw rolloutInProgress(await findTemplate(clientId, templateId));
  await queueStep(record);
  return { rollout: view };
}

/** What a rollout asks for; the rest of its record is how every rollout starts. */
export type RolloutPlan = Pick<
  RolloutRecord,
  | 'clientId'
  | 'templateId'
  | 'rolloutId'
  | 'version'
  | 'selection'
  | 'total'
  | 'waveSize'
  | 'waves'
  | 'pauseSeconds'
  | 'failureBudget'
  | 'reload'
>;

/** A rollout as it starts: running, nothing planned, its first wave next; kept as long as runs. */
export function newRolloutRecord(plan: RolloutPlan, now = new Date()): RolloutRecord {
  return {
    ...plan,
    state: 'running',
    planned: 0,
    planCursor: '',
    wave: 0,
    finishedWaves: [],
    counts: noOutcomes(),
    budgetFrom: 0,
    createdAt: now.toISOString(),
    updatedAt: now.toISOString(),
    expiresAt: expiresAt('runRetentionDays', now.getTime()),
  };
}

const fieldError = (pointer: string, message: string): FieldError => ({ location: 'body', pointer, message });

/** The ids asked for, each a tenant in the template's fleet; else 400 naming every one that is not. */
async function checkSelection(template: TemplateRecord, tenantIds: readonly number[]): Promise<TemplateMember[]> {
  const members = new Map((await findMembers(tenantIds)).map((member) => [member.tenantId, member]));
  const inFleet = (tenantId: number) => {
    const member = members.get(tenantId);
    return member?.clientId === template.clientId && member.templateId === template.templateId;
  };
  const strangers = tenantIds.filter((tenantId) => !inFleet(tenantId));
  if (strangers.length > 0) {
    throw badRequest(
      `Tenant ${strangers[0]} does not have template ${template.templateId}` +
        (strangers.length > 1 ? ` (nor ${strangers.length - 1} more)` : '') +
        '; GET /tenants/templates/{id}/tenants lists those that do',
      strangers.map((tenantId) =>
        fieldError(`/tenants/${tenantIds.indexOf(tenantId)}`, `tenant ${tenantId} does not have the template`),
      ),
      'validation_failed',
    );
  }
  return tenantIds.map((tenantId) => members.get(tenantId) as TemplateMember);
}

/**
 * The template's running or paused rollout, refused (409); one that ended or expired leaves a stale
 * mark, which a new rollout takes over (its id, for the condition that it is still that one).
 */
async function staleRolloutOf(template: TemplateRecord): Promise<number | undefined> {
  const active = template.activeRolloutId;
  if (active === undefined) return undefined;
  const record = await findRollout(active);
  if (record && (record.state === 'running' || record.state === 'paused')) throw rolloutInProgress(template);
  return active;
}

const rolloutInProgress = (template: TemplateRecord | undefined) =>
  conflict(
    template?.activeRolloutId === undefined
      ? 'Another rollout of this template started meanwhile'
      : `Rollout ${template.activeRolloutId} of this template is running or paused: let it finish, or cancel it first`,
    'rollout_in_progress',
  );

// The dry run.

export interface DryRunTenant {
  tenantId: number;
  nome: string;
  ativo: boolean;
  fromVersion: number | null;
  toVersion: number;
  /** What its turn would record. */
  outcome: Exclude<Outcome, 'pending'>;
  tables: ApplyPreview['tables'];
  reloadPlan: ApplyPreview['reloadPlan'];
  error: { code: string; message: string } | null;
}

export interface DryRun {
  dryRun: true;
  templateId: number;
  version: number;
  total: number;
  waveSize: number;
  waves: number;
  /** The first `dryRunTenants` tenants of the rollout, in its order. */
  tenants: DryRunTenant[];
  /**
   * More tenants are in the rollout than the dry run describes (it describes the first 100, fewer when
   * their answer would be too large or the request's time ran short).
   */
  truncated: boolean;
}

async function dryRun(
  template: TemplateRecord,
  version: number,
  selection: 'all' | number[],
  shape: { total: number; waveSize: number; waves: number },
  deadline: number,
): Promise<DryRun> {
  const { clientId, templateId } = template;
  const tenantIds =
    selection === 'all'
      ? (await listFleetPage(clientId, templateId, { limit: dryRunTenants, cursor: undefined })).items.map(
          (member) => member.tenantId,
        )
      : selection.slice(0, dryRunTenants);
  const [{ bundle }, tenants, members] = await Promise.all([
    versionToApply(clientId, templateId, version),
    findTenants(tenantIds),
    findMembers(tenantIds),
  ]);
  const versions = new Map(members.map((member) => [member.tenantId, member.templateVersion]));
  const describe = async (tenantId: number): Promise<DryRunTenant[]> => {
    const tenant = tenants.get(tenantId);
    if (!tenant || tenant.deletedAt) return [];
    const fromVersion = versions.get(tenantId) || null;
    const { tables, reloadPlan, refusal } = await previewApply(tenantId, { templateId, version }, bundle);
    const outcome: DryRunTenant['outcome'] = refusal
      ? 'failed'
      : !tenant.ativo
        ? 'pending_activation'
        : fromVersion === version && !tenant.pendingTemplate
          ? 'unchanged'
          : 'applied';
    const { nome, ativo } = tenant;
    return [{ tenantId, nome, ativo, fromVersion, toVersion: version, outcome, tables, reloadPlan, error: refusal }];
  };
  // Each tenant's resources are read whole: a few at a time, and no more once the answer is as large as one may be
  // (large templates list many tables and flows) or the request's time runs short.
  const described: DryRunTenant[] = [];
  let bytes = 0;
  describing: for (let index = 0; index < tenantIds.length; index += dryRunParallelism) {
    if (Date.now() > deadline - dryRunMarginMs) break;
    for (const tenant of (await Promise.all(tenantIds.slice(index, index + dryRunParallelism).map(describe))).flat()) {
      bytes += answerBytes(tenant);
      if (bytes > maxAnswerBytes / 2) break describing;
      described.push(tenant);
    }
  }
  return {
    dryRun: true,
    templateId,
    version,
    ...shape,
    tenants: described,
    truncated: shape.total > described.length,
  };
}

// Reading.

export interface WaveView {
  wave: number;
  tenants: number;
  state: 'finished' | 'running' | 'waiting';
  startedAt: string | null;
  finishedAt: string | null;
  counts: OutcomeCounts | null;
}

export interface RolloutView {
  id: number;
  templateId: number;
  version: number;
  state: RolloutRecord['state'];
  pauseReason: RolloutRecord['pauseReason'] | null;
  tenants: 'all' | number[];
  total: number;
  waveSize: number;
  pauseSeconds: number;
  failureBudget: number | null;
  reload: boolean;
  counts: OutcomeCounts;
  /** The wave running or next (1-based); null once it ended. */
  currentWave: number | null;
  nextWaveAt: string | null;
  waves: WaveView[];
  createdAt: string;
  updatedAt: string;
  finishedAt: string | null;
}

/** Outcomes summed. */
export const addCounts = (a: OutcomeCounts, b: OutcomeCounts): OutcomeCounts =>
  Object.fromEntries(outcomes.map((outcome) => [outcome, a[outcome] + b[outcome]])) as OutcomeCounts;

/** How many of `targets` ended each way. */
export function countOutcomes(targets: readonly Pick<RolloutTarget, 'outcome'>[]): OutcomeCounts {
  const counts = noOutcomes();
  for (const target of targets) counts[target.outcome]++;
  return counts;
}

/** A wave's number of tenants (the last may be smaller). */
const waveTenants = (record: RolloutRecord, wave: number) =>
  Math.max(0, Math.min(record.waveSize, record.total - wave * record.waveSize));

/**
 * The rollout's counts: its finished waves', the current wave's as its targets are now, and every
 * other tenant pending.
 */
export function rolloutCounts(record: RolloutRecord, currentWave: readonly RolloutTarget[]): OutcomeCounts {
  const done = addCounts(record.counts, { ...countOutcomes(currentWave), pending: 0 });
  const settled = done.applied + done.unchanged + done.pending_activation + done.failed;
  return { ...done, pending: Math.max(0, record.total - settled) };
}

export function describeRollout(record: RolloutRecord, currentWave: readonly RolloutTarget[]): RolloutView {
  const ended = record.state === 'finished' || record.state === 'cancelled';
  const finished = new Map(record.finishedWaves.map((wave) => [wave.wave, wave]));
  return {
    id: record.rolloutId,
    templateId: record.templateId,
    version: record.version,
    state: record.state,
    pauseReason: record.pauseReason ?? null,
    tenants: record.selection,
    total: record.total,
    waveSize: record.waveSize,
    pauseSeconds: record.pauseSeconds,
    failureBudget: record.failureBudget,
    reload: record.reload,
    counts: rolloutCounts(record, currentWave),
    currentWave: ended ? null : record.wave + 1,
    nextWaveAt: !ended && record.nextWaveAt ? new Date(record.nextWaveAt).toISOString() : null,
    waves: Array.from({ length: record.waves }, (_, wave): WaveView => {
      const done = finished.get(wave);
      if (done) {
        const { startedAt, finishedAt, counts } = done;
        return { wave: wave + 1, tenants: waveTenants(record, wave), state: 'finished', startedAt, finishedAt, counts };
      }
      const running = wave === record.wave && record.waveStartedAt !== undefined && !ended;
      return {
        wave: wave + 1,
        tenants: waveTenants(record, wave),
        state: running ? 'running' : 'waiting',
        startedAt: running ? (record.waveStartedAt ?? null) : null,
        finishedAt: null,
        counts: running
          ? { ...countOutcomes(currentWave), pending: currentWave.filter((target) => target.outcome === 'pending').length }
          : null,
      };
    }),
    createdAt: record.createdAt,
    updatedAt: record.updatedAt,
    finishedAt: record.finishedAt ?? null,
  };
}

/** The record, or 404 when there is none under this template (another client's is the same 404). */
async function existingRollout(clientId: number, templateId: number, rolloutId: number): Promise<RolloutRecord> {
  const found = await findRollout(rolloutId);
  const record = found?.clientId === clientId && found.templateId === templateId ? found : undefined;
  if (!record) {
    // A template that is not there is said so; a rollout that is not is the template's 404 otherwise.
    if (!(await findTemplate(clientId, templateId))) throw templateNotFound();
    throw rolloutNotFound();
  }
  return record;
}

/** The current wave's tenants, while one runs (its live counts). */
const currentWaveOf = (record: RolloutRecord) =>
  record.state === 'finished' || record.state === 'cancelled' || record.planCursor !== null
    ? Promise.resolve([])
    : loadWave(record.rolloutId, record.wave);

export async function getRollout(clientId: number, templateId: number, rolloutId: number): Promise<RolloutView> {
  const record = await existingRollout(clientId, templateId, rolloutId);
  return describeRollout(record, await currentWaveOf(record));
}

/** A template's rollouts, newest first (their counts as of their last finished wave). */
export async function listRollouts(clientId: number, templateId: number, limit: number, cursor: string | undefined) {
  const page = await listRolloutsPage(clientId, templateId, limit, cursor);
  if (page.items.length === 0 && cursor === undefined && !(await findTemplate(clientId, templateId))) throw templateNotFound();
  return mapPage(page, (record) => describeRollout(record, []));
}

export interface RolloutTenantView {
  tenantId: number;
  wave: number;
  outcome: Outcome;
  fromVersion: number | null;
  error: { code: string; message: string } | null;
  reloadPlan: RolloutTarget['reloadPlan'] | null;
  reloadError: string | null;
  finishedAt: string | null;
}

/**
 * A page of a rollout's tenants (all, by wave; or those with one outcome, by tenant id): one level, the
 * page read beside the rollout's record. Rollout ids are global, so the record alone says whether the
 * rollout is the caller's: until it does, the page is not looked at, and on its 404 the page (another
 * client's tenants, when the id is theirs) is dropped, its failure too (a cursor of another list is
 * still the 404 it was when the record was read first).
 */
export async function listRolloutTenants(
  clientId: number,
  templateId: number,
  rolloutId: number,
  outcome: Outcome | undefined,
  limit: number,
  cursor: string | undefined,
): Promise<Page<RolloutTenantView>> {
  const targets = listTargetsPage(rolloutId, outcome, limit, cursor);
  targets.catch(() => undefined);
  await existingRollout(clientId, templateId, rolloutId);
  const page = await targets;
  return mapPage(page, (target) => ({
    tenantId: target.tenantId,
    wave: target.wave + 1,
    outcome: target.outcome,
    fromVersion: target.fromVersion ?? null,
    error: target.error ?? null,
    reloadPlan: target.reloadPlan ?? null,
    reloadError: target.reloadError ?? null,
    finishedAt: target.finishedAt ?? null,
  }));
}

// Pause, resume, cancel.

const eventData = (record: RolloutRecord, counts: OutcomeCounts) => ({
  templateId: record.templateId,
  rolloutId: record.rolloutId,
  version: record.version,
  counts,
});

/**
 * A change of the rollout's state with the events it causes, committed together; the events sent once it
 * committed. Their deliveries keep `requestId`, the id of the request that made the change (none for the runner's).
 */
export async function changeWithEvents(
  record: RolloutRecord,
  events: (counts: OutcomeCounts) => ClientEvent[],
  write: (alongside: Alongside) => Promise<boolean>,
  counts: OutcomeCounts,
  requestId?: string,
): Promise<boolean> {
  const emitted = await clientEventWrites(record.clientId, events(counts), requestId);
  const written = await write(emitted.items);
  if (written) await emitted.afterCommit();
  return written;
}

export const pausedEvent =
  (record: RolloutRecord, reason: 'failure_budget' | 'asked') =>
  (counts: OutcomeCounts): ClientEvent[] => [{ type: 'rollout.paused', data: { ...eventData(record, counts), reason } }];

export const finishedEvent = (record: RolloutRecord, state: 'finished' | 'cancelled', counts: OutcomeCounts): ClientEvent => ({
  type: 'rollout.finished',
  data: { ...eventData(record, counts), state },
});

const stateConflict = (record: RolloutRecord, wanted: string) =>
  conflict(`The rollout is ${record.state}: only a ${wanted} rollout can be`, 'rollout_state');

/** POST …/pause: a running rollout stops before its next tenant (the tenants being applied finish). */
export async function pauseRollout(
  clientId: number,
  templateId: number,
  rolloutId: number,
  requestId?: string,
): Promise<RolloutView> {
  const record = await existingRollout(clientId, templateId, rolloutId);
  if (record.state !== 'running') throw stateConflict(record, 'running rollout paused; this one');
  const now = new Date().toISOString();
  const counts = rolloutCounts(record, await currentWaveOf(record));
  const paused = await changeWithEvents(
    record,
    pausedEvent(record, 'asked'),
    (alongside) =>
      updateRollout(
        record,
        {
          set: { state: 'paused', pauseReason: 'asked', updatedAt: now },
          condition: '#state = :running',
          values: { ':running': 'running' },
        },
        alongside,
      ),
    counts,
    requestId,
  );
  if (!paused) return pauseRollout(clientId, templateId, rolloutId, requestId);
  return getRollout(clientId, templateId, rolloutId);
}

/** POST …/resume: a paused rollout goes on where it stopped; its failure budget counts afresh from now. */
export async function resumeRollout(clientId: number, templateId: number, rolloutId: number): Promise<RolloutView> {
  const record = await existingRollout(clientId, templateId, rolloutId);
  if (record.state !== 'paused') throw stateConflict(record, 'paused rollout resumed; this one');
  const counts = rolloutCounts(record, await currentWaveOf(record));
  const resumed = await updateRollout(
    record,
    {
      set: { state: 'running', budgetFrom: counts.failed, updatedAt: new Date().toISOString() },
      remove: ['pauseReason', 'leaseId', 'leaseUntil'],
      condition: '#state = :paused AND updatedAt = :seen',
      values: { ':paused': 'paused', ':seen': record.updatedAt },
    },
    [recordFollowUp(queueing(record))],
  );
  if (!resumed) return resumeRollout(clientId, templateId, rolloutId);
  await queueStep(record);
  return getRollout(clientId, templateId, rolloutId);
}

/**
 * POST …/cancel: a running or paused rollout ends before its next tenant; what was applied stays,
 * the tenants not reached stay pending, and the template may have another rollout.
 */
export async function cancelRollout(
  clientId: number,
  templateId: number,
  rolloutId: number,
  requestId?: string,
): Promise<RolloutView> {
  const record = await existingRollout(clientId, templateId, rolloutId);
  if (record.state !== 'running' && record.state !== 'paused')
    throw stateConflict(record, 'running or paused rollout cancelled; this one');
  const now = new Date().toISOString();
  const counts = rolloutCounts(record, await currentWaveOf(record));
  const cancelled = await changeWithEvents(
    record,
    (counted) => [finishedEvent(record, 'cancelled', counted)],
    (alongside) =>
      updateRollout(
        record,
        {
          set: { state: 'cancelled', updatedAt: now, finishedAt: now },
          condition: '#state = :state',
          values: { ':state': record.state },
        },
        alongside,
        true,
      ),
    counts,
    requestId,
  );
  if (!cancelled) return cancelRollout(clientId, templateId, rolloutId, requestId);
  return getRollout(clientId, templateId, rolloutId);
}

// The queue.

/** The follow-up that puts a rollout's step on the queue (after its start or its resumption). */
export const queueing = (record: Pick<RolloutRecord, 'clientId' | 'rolloutId'>) => ({
  kind: 'queue-rollout' as const,
  ownerId: record.clientId,
  subjectId: record.rolloutId,
});

/**
 * Puts the rollout's step on the queue (in its client's message group), then drops the follow-up
 * that asked for it. A failure to send is left to the follow-up sweeper: the rollout is late, not lost.
 */
export async function queueStep(record: Pick<RolloutRecord, 'clientId' | 'rolloutId'>): Promise<void> {
  const message: RolloutMessage = { clientId: record.clientId, rolloutId: record.rolloutId };
  try {
    await sendMessage('rollout', { clientId: record.clientId, body: message });
    await deleteFollowUp(queueing(record));
  } catch (error) {
    logger.error("A rollout's step could not be queued; the follow-up sweeper will", { ...message, error: error as Error });
  }
}

/** The follow-up sweeper's part: a rollout still running gets its step queued (a second copy changes nothing). */
export async function queueLeftStep(clientId: number, rolloutId: number): Promise<void> {
  const record = await findRollout(rolloutId);
  if (record?.state === 'running')
    await sendMessage('rollout', { clientId, body: { clientId, rolloutId } satisfies RolloutMessage });
  await deleteFollowUp(queueing({ clientId, rolloutId }));
}
