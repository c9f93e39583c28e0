import { ConditionalCheckFailedException } from '@aws-sdk/client-dynamodb';
import { UpdateCommand } from '@aws-sdk/lib-dynamodb';
import type { ReloadItem } from '#functions/core/reload/plan.ts';
import { db, getItem, type Page, putAll, queryAll, queryPage, tableName, writeItem } from '#functions/core/store/dynamo.ts';
import * as stored from '#functions/core/store/entity-declarations.ts';
import { type Alongside, type AlongsideName, type NamedItem, transaction } from '#functions/core/store/transaction.ts';

export type RolloutState = 'running' | 'paused' | 'finished' | 'cancelled';
export const outcomes = ['pending', 'applied', 'unchanged', 'pending_activation', 'failed'] as const;
export type Outcome = (typeof outcomes)[number];
export type OutcomeCounts = Record<Outcome, number>;
export type PauseReason = 'failure_budget' | 'asked';

export const noOutcomes = (): OutcomeCounts => ({ pending: 0, applied: 0, unchanged: 0, pending_activation: 0, failed: 0 });

/** A finished wave: when it ran and how its tenants ended. */
export interface FinishedWave {
  wave: number;
  startedAt: string;
  finishedAt: string;
  counts: OutcomeCounts;
}

export interface RolloutRecord {
  clientId: number;
  templateId: number;
  rolloutId: number;
  version: number;
  state: RolloutState;
  pauseReason?: PauseReason;
  /** The tenants asked for: the whole fleet, or these ids. */
  selection: 'all' | number[];
  /** Tenants in the rollout (the fleet counted at the start, then the targets written). */
  total: number;
  waveSize: number;
  waves: number;
  pauseSeconds: number;
  failureBudget: number | null;
  reload: boolean;
  /** Targets written so far; the plan is done once `planCursor` is null. */
  planned: number;
  /** Where the planning goes on (the fleet page's cursor, or the index in `selection`); null once planned. */
  planCursor: string | null;
  /** The wave running or next (0-based). */
  wave: number;
  waveStartedAt?: string;
  /** Epoch ms before which the next wave does not start (the pause between waves). */
  nextWaveAt?: number;
  finishedWaves: FinishedWave[];
  /** The finished waves' outcomes, summed. */
  counts: OutcomeCounts;
  /** Failed tenants when it last resumed: the failure budget counts from there. */
  budgetFrom: number;
  /** The worker holding it until `leaseUntil` (epoch ms). */
  leaseId?: string;
  leaseUntil?: number;
  createdAt: string;
  updatedAt: string;
  finishedAt?: string;
  expiresAt: number;
}

/** One tenant of a rollout. */
export interface RolloutTarget {
  rolloutId: number;
  tenantId: number;
  wave: number;
  outcome: Outcome;
  /** The version the tenant had when its turn came (null: none of the template's). */
  fromVersion?: number | null;
  error?: { code: string; message: string };
  /** The reload plan its apply made (queued when the rollout reloads). */
  reloadPlan?: ReloadItem[];
  /** Whether the reload plan was queued (absent while it is still to be queued). */
  reloadQueued?: boolean;
  reloadError?: string;
  finishedAt?: string;
  expiresAt: number;
}

export const rolloutKey = (record: Pick<RolloutRecord, 'rolloutId'>) => stored.rollout.key(record);

/** Consistent read. */
export function findRollout(rolloutId: number): Promise<RolloutRecord | undefined> {
  return getItem<RolloutRecord>(rolloutKey({ rolloutId }));
}

/** A template's rollouts, newest first. */
export function listRolloutsPage(clientId: number, templateId: number, limit: number, cursor: string | undefined) {
  return queryPage<RolloutRecord>({
    index: 'gsi1',
    partition: stored.rollout.indexes.gsi1.partition({ clientId, templateId }),
    newestFirst: true,
    limit,
    cursor,
  });
}

/** A page of a rollout's tenants: all of them by wave, or those with one outcome (by tenant id). */
export function listTargetsPage(
  rolloutId: number,
  outcome: Outcome | undefined,
  limit: number,
  cursor: string | undefined,
): Promise<Page<RolloutTarget>> {
  return outcome === undefined
    ? // The targets only: the rollout's record shares their partition.
      queryPage<RolloutTarget>({
        partition: stored.rolloutTarget.partition({ rolloutId }),
        prefix: stored.rolloutTarget.keyPrefix({}),
        limit,
        cursor,
      })
    : queryPage<RolloutTarget>({
        index: 'gsi1',
        partition: stored.rolloutTarget.indexes.gsi1.partition({ rolloutId, outcome }),
        limit,
        cursor,
      });
}

/**
 * Every tenant of one wave (a wave holds at most the largest wave size), with what its counts and
 * turns need: not its reload plan or error, which can be large.
 */
export function loadWave(rolloutId: number, wave: number): Promise<RolloutTarget[]> {
  return queryAll<RolloutTarget>(stored.rolloutTarget.partition({ rolloutId }), stored.rolloutTarget.keyPrefix({ wave }), {
    projection: 'rolloutId, tenantId, wave, outcome, reloadQueued',
  });
}

/** Counts one more wait of a pending tenant's turn: how many it has had. */
export async function countTurnAttempt(target: Pick<RolloutTarget, 'rolloutId' | 'wave' | 'tenantId'>): Promise<number> {
  try {
    const result = await db().send(
      new UpdateCommand({
        TableName: tableName(),
        Key: stored.rolloutTarget.key(target),
        UpdateExpression: 'ADD attempts :one',
        ConditionExpression: '#outcome = :pending',
        ExpressionAttributeNames: { '#outcome': 'outcome' },
        ExpressionAttributeValues: { ':one': 1, ':pending': 'pending' },
        ReturnValues: 'UPDATED_NEW',
      }),
    );
    return Number(result.Attributes?.attempts ?? 0);
  } catch (error) {
    // Recorded meanwhile (by another copy of the step): no more waiting.
    if (error instanceof ConditionalCheckFailedException) return 0;
    throw error;
  }
}

const targetItem = (target: RolloutTarget) => ({
  ...target,
  ...stored.rolloutTarget.key(target),
  ...stored.rolloutTarget.indexEntry(target),
});

/** Writes targets (a page of the plan); writing one again changes nothing that a step recorded: only pending ones are planned. */
export function putTargets(targets: readonly RolloutTarget[]): Promise<void> {
  return putAll(targets.map(targetItem));
}

/**
 * The rollout starts: its record, the template's mark of its running rollout (conditioned on none
 * running, or on the one read being over), and `alongside` (the request's answer, the follow-up that
 * queues its first step), together. `false` when another rollout took the template meanwhile, or the
 * template is gone.
 */
export async function insertRollout(record: RolloutRecord, staleRolloutId: number | undefined, alongside: Alongside) {
  const outcome = await transaction<'rollout' | 'template' | AlongsideName>()
    .add('rollout', {
      Put: {
        TableName: tableName(),
        Item: { ...record, ...rolloutKey(record), ...stored.rollout.indexEntry(record) },
        ConditionExpression: 'attribute_not_exists(pk)',
      },
    })
    .add('template', {
      Update: {
        TableName: tableName(),
        Key: stored.template.key(record),
        UpdateExpression: 'SET activeRolloutId = :rolloutId',
        ConditionExpression:
          staleRolloutId === undefined
            ? 'attribute_exists(pk) AND attribute_not_exists(activeRolloutId)'
            : 'attribute_exists(pk) AND activeRolloutId = :stale',
        ExpressionAttributeValues: {
          ':rolloutId': record.rolloutId,
          ...(staleRolloutId === undefined ? {} : { ':stale': staleRolloutId }),
        },
      },
    })
    .include(alongside)
    .commit();
  return outcome.written;
}

/** The template's running rollout ends (it finished, or was cancelled): another may start. */
const releaseTemplate = (record: RolloutRecord): NamedItem<'template'> => ({
  name: 'template',
  item: {
    Update: {
      TableName: tableName(),
      Key: stored.template.key(record),
      UpdateExpression: 'REMOVE activeRolloutId',
      ConditionExpression: 'activeRolloutId = :rolloutId',
      ExpressionAttributeValues: { ':rolloutId': record.rolloutId },
    },
  },
});

/**
 * A change of the rollout's record: `set` (attribute values), conditioned on `condition` (with its
 * own values), plus `alongside`; `releases`: it ends the rollout, so the template's mark goes too.
 */
export async function updateRollout(
  record: RolloutRecord,
  change: {
    set: Partial<RolloutRecord>;
    remove?: readonly (keyof RolloutRecord)[];
    condition: string;
    values?: Record<string, unknown>;
  },
  alongside: Alongside = [],
  releases = false,
): Promise<boolean> {
  const names: Record<string, string> = {};
  const values: Record<string, unknown> = { ...change.values };
  const sets = Object.entries(change.set).map(([name, value], index) => {
    names[`#s${index}`] = name;
    values[`:s${index}`] = value;
    return `#s${index} = :s${index}`;
  });
  const removes = (change.remove ?? []).map((name, index) => {
    names[`#r${index}`] = name;
    return `#r${index}`;
  });
  names['#state'] = 'state';
  const outcome = await transaction<'rollout' | 'template' | AlongsideName>()
    .add('rollout', {
      Update: {
        TableName: tableName(),
        Key: rolloutKey(record),
        UpdateExpression: [sets.length ? `SET ${sets.join(', ')}` : '', removes.length ? `REMOVE ${removes.join(', ')}` : '']
          .filter(Boolean)
          .join(' '),
        ConditionExpression: `attribute_exists(pk) AND (${change.condition})`,
        ExpressionAttributeNames: names,
        ExpressionAttributeValues: values,
      },
    })
    .include(releases ? [releaseTemplate(record)] : [])
    .include(alongside)
    .commit();
  return outcome.written;
}

/**
 * Takes the rollout for a worker until `until` (epoch ms), if it is running and no other worker
 * holds it: the rollout as it is now, or undefined.
 */
export async function takeRolloutLease(
  key: Pick<RolloutRecord, 'rolloutId'>,
  leaseId: string,
  until: number,
): Promise<RolloutRecord | undefined> {
  try {
    const result = await db().send(
      new UpdateCommand({
        TableName: tableName(),
        Key: rolloutKey(key),
        UpdateExpression: 'SET leaseId = :leaseId, leaseUntil = :until',
        ConditionExpression: '#state = :running AND (attribute_not_exists(leaseUntil) OR leaseUntil < :now)',
        ExpressionAttributeNames: { '#state': 'state' },
        ExpressionAttributeValues: { ':leaseId': leaseId, ':until': until, ':running': 'running', ':now': Date.now() },
        ReturnValues: 'ALL_NEW',
      }),
    );
    return result.Attributes as RolloutRecord;
  } catch (error) {
    if (error instanceof ConditionalCheckFailedException) return undefined;
    throw error;
  }
}

/** Gives the lease back (if still held), so the next step starts at once. */
export async function releaseRolloutLease(record: RolloutRecord, leaseId: string): Promise<void> {
  await writeItem({
    Update: {
      TableName: tableName(),
      Key: rolloutKey(record),
      UpdateExpression: 'REMOVE leaseId, leaseUntil',
      ConditionExpression: 'leaseId = :leaseId',
      ExpressionAttributeValues: { ':leaseId': leaseId },
    },
  });
}

/**
 * A target's outcome, for the transaction that makes it (the apply's last one, or the tenant's mark
 * of a pending activation): conditioned on the target still pending, so a tenant's step commits once
 * whoever else runs it (a second copy of the worker's message), and never after another outcome.
 */
export function targetOutcome(
  target: Pick<RolloutTarget, 'rolloutId' | 'wave' | 'tenantId'>,
  outcome: Exclude<Outcome, 'pending'>,
  details: Pick<RolloutTarget, 'fromVersion' | 'error' | 'reloadPlan' | 'reloadQueued'>,
): NamedItem<'rolloutTarget'> {
  const set: Record<string, unknown> = {
    outcome,
    finishedAt: new Date().toISOString(),
    ...stored.rolloutTarget.indexEntry({ ...target, outcome }),
    ...Object.fromEntries(Object.entries(details).filter(([, value]) => value !== undefined)),
  };
  const names = Object.fromEntries(Object.keys(set).map((name, index) => [`#a${index}`, name]));
  const values = Object.fromEntries(Object.values(set).map((value, index) => [`:a${index}`, value]));
  return {
    name: 'rolloutTarget',
    item: {
      Update: {
        TableName: tableName(),
        Key: stored.rolloutTarget.key(target),
        UpdateExpression: `SET ${Object.keys(names)
          .map((name, index) => `${name} = :a${index}`)
          .join(', ')}`,
        ConditionExpression: '#outcome = :pending',
        ExpressionAttributeNames: { ...names, '#outcome': 'outcome' },
        ExpressionAttributeValues: { ...values, ':pending': 'pending' },
      },
    },
  };
}

/** Records that an applied tenant's reload plan was queued (or why it could not be). */
export async function markReloadQueued(target: RolloutTarget, reloadError: string | undefined): Promise<void> {
  await writeItem({
    Update: {
      TableName: tableName(),
      Key: stored.rolloutTarget.key(target),
      UpdateExpression: reloadError === undefined ? 'SET reloadQueued = :true' : 'SET reloadQueued = :true, reloadError = :error',
      ConditionExpression: 'attribute_exists(pk)',
      ExpressionAttributeValues: { ':true': true, ...(reloadError === undefined ? {} : { ':error': reloadError }) },
    },
  });
}
