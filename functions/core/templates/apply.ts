import { randomUUID } from 'node:crypto';
import { listAgents } from '#functions/core/agents/agent-repository.ts';
import { conflict } from '#functions/core/errors.ts';
import { clearFollowUp } from '#functions/core/follow-ups/follow-up-repository.ts';
import type { TransactItem } from '#functions/core/store/dynamo.ts';
import { type ReloadItem, reloadPlan } from '#functions/core/reload/plan.ts';
import { findTenant, tenantInactive, tenantNotFound } from '#functions/core/tenants/tenant-repository.ts';
import { latestTemplateVersion } from './catalogue.ts';
import {
  allocateResourceIds,
  type ApplyJournal,
  findApplyJournal,
  finishApplyJournal,
  loadResources,
  recordPendingTables,
  releaseApplyLock,
  replaceApplyJournal,
  writeResources,
} from './template-repository.ts';
import { computeChanges, newIdsNeeded, type StoredOf, type StoredResource } from './tenant-resources.ts';

export interface ApplyOptions {
  /** Epoch milliseconds when the calling function times out: the apply lock lasts until then, no longer. */
  deadline: number;
  /**
   * Nobody receives this apply's plan (the tenant's pending template, applied on creation, on
   * activation or by the follow-up sweeper): its tables stay pending, for the next apply's plan.
   */
  keepPlanPending?: boolean;
  /** Committed with the apply's last transaction (the creating request's answer). */
  alongside?: readonly TransactItem[];
}

/**
 * Spec 4.4: writes the latest version of a client's template into the tenant and returns the
 * reload plan. Resources are written in batches; if that fails half-way, the journal keeps the
 * tables the unfinished apply created or rebuilt, so the next apply (which rewrites whatever
 * still differs) converges and its plan still lists their flows. While the tenant waits for the
 * template it was created with (its pending template), only that one applies.
 */
export async function applyTemplate(tenantId: number, templateId: number, options: ApplyOptions): Promise<ReloadItem[]> {
  const tenant = await findTenant(tenantId);
  if (!tenant || tenant.deletedAt) throw tenantNotFound();
  if (!tenant.ativo) throw tenantInactive();
  const pendingTemplate = tenant.pendingTemplate;
  if (pendingTemplate && pendingTemplate.templateId !== templateId) {
    throw conflict(
      `The tenant's first template (${pendingTemplate.templateId}) is still being applied; retry shortly`,
      'tenant_provisioning',
    );
  }
  const { version, bundle } = await latestTemplateVersion(tenant.clientId, templateId);

  const lock = await claimApply(tenantId, templateId, version, options.deadline);
  try {
    const current = await loadResources(tenantId);
    const freshIds = await allocateResourceIds(tenantId, newIdsNeeded(bundle, current));
    const { changed, createdOrRebuiltTables } = computeChanges(tenantId, { templateId, version }, bundle, current, freshIds);
    const pending = [...new Set([...lock.pendingTables, ...createdOrRebuiltTables])];
    if (pending.length > lock.pendingTables.length) await recordPendingTables(tenantId, lock.lockId, pending);
    await writeResources(changed);

    const after = mergeResources(current, changed);
    const plan = reloadPlan(new Set(pending), ofType(after, 'flow'), ofType(after, 'connection'), await listAgents(tenantId));
    // The tenant records the version it now has, and the journal closes, together.
    const finished = await finishApplyJournal(
      tenantId,
      lock.lockId,
      { templateId, version },
      options.keepPlanPending ? pending : [],
      [
        ...(pendingTemplate ? [clearFollowUp({ kind: 'provision', tenantId, subjectId: tenantId })] : []),
        ...(options.alongside ?? []),
      ],
    );
    if (!finished) throw tenantNotFound();
    return plan;
  } catch (error) {
    await releaseApplyLock(tenantId, lock.lockId);
    throw error;
  }
}

const mergeResources = (current: readonly StoredResource[], changed: readonly StoredResource[]) => {
  const byKey = new Map(current.map((resource) => [`${resource.type}:${resource.key}`, resource]));
  for (const resource of changed) byKey.set(`${resource.type}:${resource.key}`, resource);
  return [...byKey.values()];
};

const ofType = <T extends StoredResource['type']>(resources: readonly StoredResource[], type: T) =>
  resources.filter((resource): resource is StoredOf<T> => resource.type === type);

/**
 * Takes the tenant's apply lock until `deadline`, carrying over what an unfinished apply left
 * pending. A lock whose holder died lasts no longer than that holder's function could have run.
 */
async function claimApply(tenantId: number, templateId: number, version: number, deadline: number): Promise<ApplyJournal> {
  const previous = await findApplyJournal(tenantId);
  const now = Date.now();
  if (previous?.state === 'in_progress' && previous.lockedUntil > now) {
    throw conflict('A template is being applied to this tenant right now; retry shortly', 'apply_in_progress', [], {
      'retry-after': String(Math.max(1, Math.ceil((previous.lockedUntil - now) / 1000))),
    });
  }
  const journal: ApplyJournal = {
    state: 'in_progress',
    lockId: randomUUID(),
    lockedUntil: deadline,
    templateId,
    version,
    pendingTables: previous?.pendingTables ?? [],
  };
  const written = await replaceApplyJournal(tenantId, journal, previous);
  if (!written) throw conflict('A template is being applied to this tenant right now; retry shortly', 'apply_in_progress');
  return journal;
}
