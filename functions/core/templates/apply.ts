import { randomUUID } from 'node:crypto';
import { GetCommand, PutCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { listAgents } from '../agents/agent-repository.ts';
import { conflict } from '../errors.ts';
import { type ReloadItem, reloadPlan } from '../reload/plan.ts';
import { allocateIds, db, tableName, transact, writeIf } from '../store/dynamo.ts';
import { keys } from '../store/keys.ts';
import { findTenant, tenantInactive, tenantNotFound } from '../tenants/tenant-repository.ts';
import { latestTemplateVersion } from './catalogue.ts';
import {
  computeChanges,
  type IdCounter,
  loadResources,
  newIdsNeeded,
  type StoredOf,
  type StoredResource,
  writeResources,
} from './tenant-resources.ts';

/** Longer than any apply takes; a lock older than this belongs to an apply that died. */
const applyLockMs = 120_000;

interface ApplyJournal {
  state: 'in_progress' | 'done';
  lockId: string;
  lockedUntil: number;
  templateId: number;
  version: number;
  /**
   * Tables created or rebuilt whose reload plan has not been handed to the tenant yet: by an
   * apply that failed half-way, or by the apply on creation (whose answer is the tenant, not a
   * plan). The next apply's plan covers them.
   */
  pendingTables: string[];
}

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
    const freshIds = await allocateFreshIds(tenantId, newIdsNeeded(bundle, current));
    const { changed, createdOrRebuiltTables } = computeChanges(tenantId, { templateId, version }, bundle, current, freshIds);
    const pending = [...new Set([...lock.pendingTables, ...createdOrRebuiltTables])];
    if (pending.length > lock.pendingTables.length) await recordPending(tenantId, lock.lockId, pending);
    await writeResources(changed);

    const after = mergeResources(current, changed);
    const plan = reloadPlan(new Set(pending), ofType(after, 'flow'), ofType(after, 'connection'), await listAgents(tenantId));
    await finishApply(tenantId, lock.lockId, { templateId, version }, options.onCreation ? pending : []);
    return plan;
  } catch (error) {
    await releaseLock(tenantId, lock.lockId);
    throw error;
  }
}

async function allocateFreshIds(tenantId: number, needs: Record<IdCounter, number>): Promise<Record<IdCounter, number[]>> {
  const entries = await Promise.all(
    (Object.entries(needs) as [IdCounter, number][]).map(
      async ([counter, count]) => [counter, await allocateIds(keys.tenantCounter(tenantId, counter), count)] as const,
    ),
  );
  return Object.fromEntries(entries) as Record<IdCounter, number[]>;
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
  const key = keys.applyJournal(tenantId);
  const previous = (await db().send(new GetCommand({ TableName: tableName(), Key: key, ConsistentRead: true }))).Item as
    ApplyJournal | undefined;
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
  const written = await writeIf(() =>
    db().send(
      new PutCommand({
        TableName: tableName(),
        Item: { ...key, ...journal },
        ConditionExpression: previous ? 'lockId = :previousLock' : 'attribute_not_exists(pk)',
        ExpressionAttributeValues: previous ? { ':previousLock': previous.lockId } : undefined,
      }),
    ),
  );
  if (!written) throw conflict('A template is being applied to this tenant right now; retry shortly', 'apply_in_progress');
  return journal;
}

async function recordPending(tenantId: number, lockId: string, pendingTables: string[]): Promise<void> {
  await db().send(
    new UpdateCommand({
      TableName: tableName(),
      Key: keys.applyJournal(tenantId),
      UpdateExpression: 'SET pendingTables = :pending',
      ConditionExpression: 'lockId = :lockId',
      ExpressionAttributeValues: { ':pending': pendingTables, ':lockId': lockId },
    }),
  );
}

/** The tenant records the version it now has, and the journal closes, together. */
async function finishApply(
  tenantId: number,
  lockId: string,
  { templateId, version }: { templateId: number; version: number },
  stillPending: string[],
): Promise<void> {
  const finished = await transact([
    {
      Update: {
        TableName: tableName(),
        Key: keys.tenant(tenantId),
        UpdateExpression: 'SET appliedTemplate = :applied',
        ConditionExpression: 'attribute_exists(pk) AND attribute_not_exists(deletedAt)',
        ExpressionAttributeValues: { ':applied': { templateId, version, appliedAt: new Date().toISOString() } },
      },
    },
    {
      Update: {
        TableName: tableName(),
        Key: keys.applyJournal(tenantId),
        UpdateExpression: 'SET #state = :done, pendingTables = :pending, lockedUntil = :zero',
        ConditionExpression: 'lockId = :lockId',
        ExpressionAttributeNames: { '#state': 'state' },
        ExpressionAttributeValues: { ':done': 'done', ':pending': stillPending, ':zero': 0, ':lockId': lockId },
      },
    },
  ]);
  if (!finished) throw tenantNotFound();
}

/** After a failure: the journal stays in progress (its pending tables matter) but the next apply may start at once. */
async function releaseLock(tenantId: number, lockId: string): Promise<void> {
  // Another apply holding the lock now is left alone.
  await writeIf(() =>
    db().send(
      new UpdateCommand({
        TableName: tableName(),
        Key: keys.applyJournal(tenantId),
        UpdateExpression: 'SET lockedUntil = :zero',
        ConditionExpression: 'lockId = :lockId',
        ExpressionAttributeValues: { ':zero': 0, ':lockId': lockId },
      }),
    ),
  );
}
