import { DeleteCommand } from '@aws-sdk/lib-dynamodb';
import { db, type Page, queryPage, tableName } from '#functions/core/store/dynamo.ts';
import * as stored from '#functions/core/store/entity-declarations.ts';
import type { NamedItem } from '#functions/core/store/transaction.ts';

/**
 * Work that a write leaves to be finished after it, by the request that made it or, if that
 * request stops (a crash, a time-out, an error), by the follow-up sweeper:
 * - `provision`: apply an active tenant's pending template (created with one, or activated);
 * - `enqueue-delivery`: put a queued webhook delivery on the queue; `enqueue-event`, a queued delivery of
 *   an integrator's event (owned by its client);
 * - `sweep-user`, `sweep-group`: delete the memberships and permission records a deleted user or group left;
 * - `tidy-datamart`: delete what a datamart's record no longer accounts for (all of a deleted one's
 *   collection; the permission records on tables taken out of it);
 * - `sweep-template`: delete a deleted template's versions;
 * - `queue-rollout`: put a started or resumed rollout's step on the rollout queue (owned by its client).
 * Each is finished from what the table holds (the record says what to do), so the request and the
 * sweeper finishing one at the same time converge on the same state.
 */
export type FollowUpKind =
  | 'provision'
  | 'enqueue-delivery'
  | 'enqueue-event'
  | 'sweep-user'
  | 'sweep-group'
  | 'tidy-datamart'
  | 'sweep-template'
  | 'queue-rollout';

export interface FollowUp {
  kind: FollowUpKind;
  /** The tenant the work is about (the client, for a template or an event). */
  ownerId: number;
  /** What it is about: the tenant, delivery, user, group, datamart or template id. */
  subjectId: number;
  /** Epoch milliseconds. */
  createdAt: number;
}

/** Partitions of the follow-ups, by owner: one busy tenant's writes stay on one. */
export const followUpShards = 8;

const followUpKey = ({ ownerId, kind, subjectId }: Omit<FollowUp, 'createdAt'>) =>
  stored.followUp.key({ shard: ownerId % followUpShards, kind, ownerId, subjectId });

/** An item a follow-up adds to another write's transaction: unconditional, so it never fails. */
export type FollowUpItem = NamedItem<'followUp'>;

/** For the transaction of the write that leaves the work. */
export function recordFollowUp(followUp: Omit<FollowUp, 'createdAt'>, now = Date.now()): FollowUpItem {
  return {
    name: 'followUp',
    item: { Put: { TableName: tableName(), Item: { ...followUpKey(followUp), ...followUp, createdAt: now } } },
  };
}

/** For the transaction of the write that finishes the work. */
export function clearFollowUp(followUp: Omit<FollowUp, 'createdAt'>): FollowUpItem {
  return { name: 'followUp', item: { Delete: { TableName: tableName(), Key: followUpKey(followUp) } } };
}

/** When the work's last step is not a transaction (a queue send, a batch of deletes). */
export async function deleteFollowUp(followUp: Omit<FollowUp, 'createdAt'>): Promise<void> {
  await db().send(new DeleteCommand({ TableName: tableName(), Key: followUpKey(followUp) }));
}

/** A page of one shard's follow-ups, oldest kinds first (the sweeper filters by age itself). */
export function listFollowUps(shard: number, limit: number, cursor: string | undefined): Promise<Page<FollowUp>> {
  return queryPage<FollowUp>({ partition: stored.followUp.partition({ shard }), limit, cursor });
}
