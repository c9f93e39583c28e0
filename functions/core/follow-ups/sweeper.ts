import { sendQueuedDelivery } from '#functions/core/alerts/deliveries.ts';
import { clientOwner, tenantOwner } from '#functions/core/webhooks/owner.ts';
import { tidyDatamart } from '#functions/core/datamarts/datamarts.ts';
import { sweepGroup, sweepUser } from '#functions/core/directory/directory.ts';
import { sweepTemplate } from '#functions/core/templates/catalogue.ts';
import { queueLeftStep } from '#functions/core/rollouts/rollouts.ts';
import { logger } from '#functions/core/observability/logger.ts';
import { count } from '#functions/core/observability/metrics.ts';
import { findTenant } from '#functions/core/tenants/tenant-repository.ts';
import { applyPendingTemplate } from '#functions/core/tenants/tenants.ts';
import { deleteFollowUp, type FollowUp, type FollowUpKind, followUpShards, listFollowUps } from './follow-up-repository.ts';

/**
 * A follow-up younger than this may still be in the hands of the request that wrote it: every
 * route's function times out well before (15 s), so an older one was left behind.
 */
export const followUpGraceMs = 2 * 60_000;
const pageSize = 100;

/** How each kind of follow-up is finished; each deletes its follow-up once done. */
const finishers: Record<FollowUpKind, (followUp: FollowUp, deadline: number) => Promise<void>> = {
  provision: async (followUp, deadline) => {
    const tenant = await findTenant(followUp.ownerId);
    // Deactivated or deleted since, or applied meanwhile: nothing to apply now (activation writes it again).
    if (!tenant?.pendingTemplate || !tenant.ativo || tenant.deletedAt) await deleteFollowUp(followUp);
    else await applyPendingTemplate(tenant, deadline);
  },
  'enqueue-delivery': ({ ownerId, subjectId }) => sendQueuedDelivery(tenantOwner(ownerId), subjectId),
  'enqueue-event': ({ ownerId, subjectId }) => sendQueuedDelivery(clientOwner(ownerId), subjectId),
  'sweep-user': ({ ownerId, subjectId }) => sweepUser(ownerId, subjectId),
  'sweep-group': ({ ownerId, subjectId }) => sweepGroup(ownerId, subjectId),
  'tidy-datamart': ({ ownerId, subjectId }) => tidyDatamart(ownerId, subjectId),
  'sweep-template': ({ ownerId, subjectId }) => sweepTemplate(ownerId, subjectId),
  'queue-rollout': ({ ownerId, subjectId }) => queueLeftStep(ownerId, subjectId),
};

/** Finishes one follow-up (and deletes it), within `deadline` for the locks it takes. */
export function finishFollowUp(followUp: FollowUp, deadline: number): Promise<void> {
  return finishers[followUp.kind](followUp, deadline);
}

/**
 * Finishes the work that requests left behind (they crashed, timed out or failed after their main
 * write): every follow-up older than the grace period, shard by shard, until `deadline`. One that
 * fails stays for the next run, counted and logged; the others go on.
 */
export async function finishFollowUps(now: number, deadline: number): Promise<{ finished: number; failed: number }> {
  const outcome = { finished: 0, failed: 0 };
  const sweepShard = async (shard: number) => {
    let cursor: string | undefined;
    do {
      const page = await listFollowUps(shard, pageSize, cursor);
      for (const followUp of page.items) {
        if (Date.now() >= deadline) return;
        if (followUp.createdAt > now - followUpGraceMs) continue;
        try {
          await finishFollowUp(followUp, deadline);
          outcome.finished++;
        } catch (error) {
          outcome.failed++;
          logger.error('A follow-up could not be finished; the next run tries again', { ...followUp, error: error as Error });
        }
      }
      cursor = page.nextCursor ?? undefined;
    } while (cursor !== undefined);
  };
  await Promise.all(Array.from({ length: followUpShards }, (_, shard) => sweepShard(shard)));
  count('FollowUpsFinished', outcome.finished);
  count('FollowUpFailures', outcome.failed);
  return outcome;
}
