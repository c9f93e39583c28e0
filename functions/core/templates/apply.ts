import { randomUUID } from 'node:crypto';
import { listAgents } from '#functions/core/agents/agent-repository.ts';
import { conflict } from '#functions/core/errors.ts';
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

/** Longer than any apply takes; a lock older than this belongs to an apply that died. */
const applyLockMs = 120_000;

/**
 * Spec 4.4: writes the latest version of a client's template into the tenant and returns the
 * reload plan. Resources are written in batches; if that fails half-way, the journal keeps the
 * tables the unfinished apply created or rebuilt, so the next apply (which rewrites whatever
 * still differs) converges and its plan still lists their flows. The apply on creation keeps
 * them too: its plan is delivered by the tenant's first apply.
 */
export async function applyTemplate(
  tenantId: number,
  templateId: number,
  options: { onCreation?: boolean } = {},
): Promise<ReloadItem[]> {
  const tenant = await findTenant(tenantId);
  if (!tenant || tenant.deletedAt) throw tenantNotFound();
  // A tenant created inactive still gets its template; afterwards only active tenants apply.
  if (!tenant.ativo && !options.onCreation) throw tenantInactive();
  const { version, bundle } = await latestTemplateVersion(tenant.clientId, templateId);

  const lock = await claimApply(tenantId, templateId, version);
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
    const finished = await finishApplyJournal(tenantId, lock.lockId, { templateId, version }, options.onCreation ? pending : []);
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

/** Takes the tenant's apply lock, carrying over what an unfinished apply left pending. */
async function claimApply(tenantId: number, templateId: number, version: number): Promise<ApplyJournal> {
  const previous = await findApplyJournal(tenantId);
  const now = Date.now();
  if (previous?.state === 'in_progress' && previous.lockedUntil > now) {
    throw conflict('A template is being applied to this tenant right now; retry shortly', 'apply_in_progress');
  }
  const journal: ApplyJournal = {
    state: 'in_progress',
    lockId: randomUUID(),
    lockedUntil: now + applyLockMs,
    templateId,
    version,
    pendingTables: previous?.pendingTables ?? [],
  };
  const written = await replaceApplyJournal(tenantId, journal, previous);
  if (!written) throw conflict('A template is being applied to this tenant right now; retry shortly', 'apply_in_progress');
  return journal;
}
