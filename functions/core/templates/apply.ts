import { randomUUID } from 'node:crypto';
import { listAgents } from '#functions/core/agents/agent-repository.ts';
import { conflict } from '#functions/core/errors.ts';
import { clearFollowUp } from '#functions/core/follow-ups/follow-up-repository.ts';
import type { Alongside } from '#functions/core/store/transaction.ts';
import { type ReloadItem, reloadPlan } from '#functions/core/reload/plan.ts';
import { tenantInactive, tenantNotFound } from '#functions/core/tenants/tenant-repository.ts';
import { applyRefusal } from './apply-check.ts';
import { templateNotFound, templateVersionNotFound } from './catalogue.ts';
import { memberPut } from './fleet-repository.ts';
import {
  type ApplyJournal,
  claimApplyJournal,
  findLatestVersion,
  findTemplate,
  finishApplyJournal,
  loadResources,
  loadVersionBundle,
  readApplyState,
  releaseApplyLock,
  writeResources,
} from './template-repository.ts';
import type { TemplateBundle } from './bundle.ts';
import {
  computeChanges,
  type IdCounter,
  mergeResources,
  newIdsNeeded,
  type StoredOf,
  type StoredResource,
  tablesToReload,
} from './tenant-resources.ts';

export interface ApplyOptions {
  /** Epoch milliseconds when the calling function times out: the apply lock lasts until then, no longer. */
  deadline: number;
  /**
   * Nobody receives this apply's plan (the tenant's pending template, applied on creation, on
   * activation or by the follow-up sweeper): its tables stay pending, for the next apply's plan.
   */
  keepPlanPending?: boolean;
  /**
   * Committed with the apply's last transaction (the creating request's answer; a rollout's step,
   * which records the plan the apply makes).
   */
  alongside?: Alongside | ((plan: ReloadItem[]) => Alongside);
  /** The version to apply (a rollout's, or one it left pending); the latest without it. */
  version?: number | undefined;
}

/**
 * Spec 4.4: writes the latest version of a client's template into the tenant and returns the
 * reload plan. An apply that would leave the tenant's flows in a dependency cycle, or the tenant
 * past its limits, is refused (409) before anything is written (apply-check.ts). Resources are
 * written in batches; if that fails half-way, the journal keeps the tables the unfinished apply
 * created or rebuilt, so the next apply (which rewrites whatever still differs) converges and its
 * plan still lists their flows. While the tenant waits for the template it was created with (its
 * pending template), only that one applies.
 *
 * Its requests, besides the writes: the tenant and its journal (one batch read), the tenant's
 * resources and agents, together; the template and its latest version, together; the lock, which
 * also gives the new ids and records the tables to reload; then the resources, 25 a batch write;
 * then one transaction closing the journal.
 */
export async function applyTemplate(tenantId: number, templateId: number, options: ApplyOptions): Promise<ReloadItem[]> {
  const [state, current, agents] = await Promise.all([readApplyState(tenantId), loadResources(tenantId), listAgents(tenantId)]);
  const { tenant, journal: previous } = state;
  if (!tenant || tenant.deletedAt) throw tenantNotFound();
  if (!tenant.ativo) throw tenantInactive();
  const pendingTemplate = tenant.pendingTemplate;
  if (pendingTemplate && pendingTemplate.templateId !== templateId) {
    throw conflict(
      `The tenant's first template (${pendingTemplate.templateId}) is still being applied; retry shortly`,
      'tenant_provisioning',
    );
  }
  refuseWhileLocked(previous);
  const { version, bundle } = await versionToApply(tenant.clientId, templateId, options.version);
  // Before anything is written: the tenant this apply would leave must be one later operations take
  // (its flows in a dependency order, within the tenant's limits). The lock below is conditional on the
  // journal as read, so `current` is still what the apply writes over.
  const refusal = applyRefusal(tenantId, { templateId, version }, bundle, current);
  if (refusal) throw refusal;

  const needs = newIdsNeeded(bundle, current);
  const pending = [...new Set([...(previous?.pendingTables ?? []), ...tablesToReload(bundle, current)])];
  const lock: ApplyJournal = {
    state: 'in_progress',
    lockId: randomUUID(),
    lockedUntil: options.deadline,
    templateId,
    version,
    pendingTables: pending,
  };
  // Conditional on the journal as read: an apply that ran since (and so may have changed the
  // resources read above) changed its lock id, and this one stops here.
  const freshIds = await claimApplyJournal(tenantId, lock, previous, needs);
  if (!freshIds) throw applyInProgress();
  try {
    const { changed } = computeChanges(tenantId, { templateId, version }, bundle, current, freshIds);
    await writeResources(changed);

    const after = mergeResources(current, changed);
    const plan = reloadPlan(new Set(pending), ofType(after, 'flow'), ofType(after, 'connection'), agents);
    // The tenant records the version it now has, and the journal closes, together.
    const finished = await finishApplyJournal(
      tenantId,
      lock.lockId,
      { templateId, version },
      options.keepPlanPending ? pending : [],
      [
        ...(pendingTemplate ? [clearFollowUp({ kind: 'provision', ownerId: tenantId, subjectId: tenantId })] : []),
        // The tenant is now in the template's fleet at this version.
        memberPut({ tenantId, clientId: tenant.clientId, templateId, templateVersion: version, pending: false }),
        ...(typeof options.alongside === 'function' ? options.alongside(plan) : (options.alongside ?? [])),
      ],
    );
    if (!finished) throw tenantNotFound();
    return plan;
  } catch (error) {
    await releaseApplyLock(tenantId, lock.lockId);
    throw error;
  }
}

/**
 * The template's version `version` (it must still exist, as must the template), or its latest: its
 * record and its newest version item, read together.
 */
export async function versionToApply(clientId: number, templateId: number, version?: number) {
  if (version !== undefined) {
    const [template, bundle] = await Promise.all([
      findTemplate(clientId, templateId),
      loadVersionBundle(clientId, templateId, version),
    ]);
    if (!template) throw templateNotFound();
    if (!bundle) throw templateVersionNotFound(version);
    return { version, bundle };
  }
  const [template, newest] = await Promise.all([findTemplate(clientId, templateId), findLatestVersion(clientId, templateId)]);
  if (!template) throw templateNotFound();
  // A version published between the two reads: the record's is the one to apply.
  if (newest?.version === template.latestVersion) return newest;
  const bundle = await loadVersionBundle(clientId, templateId, template.latestVersion);
  if (!bundle) throw templateNotFound();
  return { version: template.latestVersion, bundle };
}

const applyInProgress = (retryAfterSeconds?: number) =>
  conflict(
    'A template is being applied to this tenant right now; retry shortly',
    'apply_in_progress',
    [],
    retryAfterSeconds === undefined ? undefined : { 'retry-after': String(retryAfterSeconds) },
  );

/** An apply holding the lock until its function's deadline: a lock whose holder died lasts no longer than that. */
function refuseWhileLocked(journal: ApplyJournal | undefined): void {
  const now = Date.now();
  if (journal?.state === 'in_progress' && journal.lockedUntil > now) {
    throw applyInProgress(Math.max(1, Math.ceil((journal.lockedUntil - now) / 1000)));
  }
}

const ofType = <T extends StoredResource['type']>(resources: readonly StoredResource[], type: T) =>
  resources.filter((resource): resource is StoredOf<T> => resource.type === type);

/** A planned reload item of a dry run: a new flow has no id until the apply gives it one. */
export interface PreviewReloadItem {
  flowKey: string;
  flowId: number | null;
  tokenId: number;
  context: string;
}

/** What applying a version would do to a tenant, written nowhere (a rollout's dry run). */
export interface ApplyPreview {
  tables: { created: string[]; rebuilt: string[]; unchanged: string[] };
  reloadPlan: PreviewReloadItem[];
  /** Why the apply would be refused (the 409 it would answer), else null. */
  refusal: { code: string; message: string } | null;
}

/**
 * The tables applying `bundle` would create, rebuild and leave as they are, and the reload plan it
 * would hand back (its new flows without ids; with the tables an earlier apply left pending), or its
 * refusal: the apply's own computations over the tenant's resources, journal and agents as they
 * are, with nothing taken or written.
 */
export async function previewApply(
  tenantId: number,
  template: { templateId: number; version: number },
  bundle: TemplateBundle,
): Promise<ApplyPreview> {
  const [current, agents, { journal }] = await Promise.all([
    loadResources(tenantId),
    listAgents(tenantId),
    readApplyState(tenantId),
  ]);
  const existingTables = new Set(current.flatMap((resource) => (resource.type === 'table' ? [resource.key] : [])));
  const toReload = new Set(tablesToReload(bundle, current));
  const keys = (bundle.tables ?? []).map((table) => table.key);
  const tables = {
    created: keys.filter((key) => !existingTables.has(key)),
    rebuilt: keys.filter((key) => existingTables.has(key) && toReload.has(key)),
    unchanged: keys.filter((key) => !toReload.has(key)),
  };
  const refusal = applyRefusal(tenantId, template, bundle, current);
  if (refusal) return { tables, reloadPlan: [], refusal: { code: refusal.code, message: refusal.message } };
  // New resources take ids below zero here, so that the plan can tell them from the ones the tenant has.
  let placeholder = 0;
  const placeholders = Object.fromEntries(
    Object.entries(newIdsNeeded(bundle, current)).map(([counter, count]) => [
      counter,
      Array.from({ length: count }, () => --placeholder),
    ]),
  ) as Record<IdCounter, number[]>;
  const after = mergeResources(current, computeChanges(tenantId, template, bundle, current, placeholders).changed);
  const flows = ofType(after, 'flow');
  const keyOf = new Map(flows.map((flow) => [flow.id, flow.key]));
  const plan = reloadPlan(new Set([...(journal?.pendingTables ?? []), ...toReload]), flows, ofType(after, 'connection'), agents);
  return {
    tables,
    reloadPlan: plan.map((item) => ({
      flowKey: keyOf.get(item.flowId) ?? '',
      flowId: item.flowId > 0 ? item.flowId : null,
      tokenId: item.tokenId,
      context: item.context,
    })),
    refusal: null,
  };
}
