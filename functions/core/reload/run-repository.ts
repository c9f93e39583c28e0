import { QueryCommand } from '@aws-sdk/lib-dynamodb';
import type { ReportRunBody } from '#functions/core/api/validators/report-run.cjs';
import {
  db,
  getItem,
  nextTenantId,
  type Page,
  queryFilteredPage,
  queryPage,
  tableName,
  updateReturning,
  writeItem,
} from '#functions/core/store/dynamo.ts';
import { expiresAt } from '#functions/core/store/retention.ts';
import * as stored from '#functions/core/store/entity-declarations.ts';
import { type Alongside, type AlongsideName, transaction } from '#functions/core/store/transaction.ts';

/** `dispatched` until the agent reports the others. */
export type RunStatus = 'dispatched' | ReportRunBody['status'];

/**
 * One load handed to an agent: created `dispatched` by the reload worker, then reported by the
 * agent. It holds no copy of the tenant's development_variables (up to 64 KiB, which made most of
 * a run's size): the agent gets the tenant's own when it takes the run (the heartbeat reads them).
 */
export interface RunRecord {
  runId: number;
  tenantId: number;
  agentId: number;
  flowId: number;
  context: string;
  batchId: string;
  /** The id of the request that queued its load (absent for a schedule's or a rollout's, and for runs written before it was kept). */
  requestId?: string;
  /** The failed run this one retries (POST /tenant/runs/{id}/retry). */
  retryOf?: number;
  status: RunStatus;
  message?: string;
  createdAt: string;
  updatedAt: string;
  /** TTL (epoch seconds): runs are kept `runRetentionDays` (store/retention.ts). */
  expiresAt: number;
}

/**
 * Gives a run an earlier version wrote (no `expiresAt`, a copy of the tenant's variables) the expiry
 * a run written at its `createdAt` gets, and drops the copy (migration 7); only while it has no expiry.
 */
export async function expireEarlierRun(run: { pk: string; sk: string; createdAt: string }): Promise<void> {
  await writeItem({
    Update: {
      TableName: tableName(),
      Key: { pk: run.pk, sk: run.sk },
      UpdateExpression: 'SET expiresAt = :expiresAt REMOVE variables',
      ConditionExpression: 'attribute_exists(pk) AND attribute_not_exists(expiresAt)',
      ExpressionAttributeValues: { ':expiresAt': expiresAt('runRetentionDays', Date.parse(run.createdAt)) },
    },
  });
}

/** How long the record that a queued load was already turned into a run is kept. */
const recordedLoadRetentionSeconds = 7 * 24 * 60 * 60;

/** Whether the queued load of this deduplication id was already turned into a run. */
export async function loadRecorded(tenantId: number, deduplicationId: string): Promise<boolean> {
  return (await getItem(stored.recordedLoad.key({ tenantId, deduplicationId }))) !== undefined;
}

export function allocateRunId(tenantId: number): Promise<number> {
  return nextTenantId(tenantId, 'run');
}

/**
 * Writes the run on its agent's pending list and marks its load as recorded, together; `false`
 * when the load was recorded already.
 */
export async function insertRun(run: RunRecord, deduplicationId: string): Promise<boolean> {
  const outcome = await transaction<'recordedLoad' | 'run'>()
    .add('recordedLoad', {
      Put: {
        TableName: tableName(),
        Item: {
          ...stored.recordedLoad.key({ tenantId: run.tenantId, deduplicationId }),
          runId: run.runId,
          expiresAt: Math.floor(Date.now() / 1000) + recordedLoadRetentionSeconds,
        },
        ConditionExpression: 'attribute_not_exists(pk)',
      },
    })
    .add('run', {
      Put: {
        TableName: tableName(),
        Item: {
          ...run,
          ...stored.run.key(run),
          ...stored.run.indexEntry(run),
        },
      },
    })
    .commit();
  return outcome.written;
}

/** The runs dispatched to an agent and not yet taken, oldest first. */
export async function pendingRuns(tenantId: number, agentId: number, limit = 50): Promise<RunRecord[]> {
  const result = await db().send(
    new QueryCommand({
      TableName: tableName(),
      IndexName: 'gsi1',
      KeyConditionExpression: 'gsi1pk = :pending',
      ExpressionAttributeValues: { ':pending': stored.run.indexes.gsi1.partition({ tenantId, agentId }) },
      Limit: limit,
    }),
  );
  return (result.Items ?? []) as RunRecord[];
}

/**
 * Records the agent's report on a run that is its own and not finished, and takes the run off the
 * agent's pending list, with `alongside` (the integrator's `run.failed` event) in the same commit.
 * Otherwise changes nothing and answers what the run was (agent and status), or `undefined` when
 * there is no such run.
 */
export async function updateRunStatus(
  tenantId: number,
  agentId: number,
  runId: number,
  report: ReportRunBody,
  alongside: Alongside = [],
): Promise<{ updated: RunRecord } | { refused: { agentId: number; status: string | undefined } | undefined }> {
  const update = {
    TableName: tableName(),
    Key: stored.run.key({ tenantId, runId }),
    UpdateExpression: `SET #status = :status, updatedAt = :now${report.message === undefined ? '' : ', message = :message'} REMOVE gsi1pk, gsi1sk`,
    ConditionExpression: 'attribute_exists(pk) AND agentId = :agentId AND NOT #status IN (:succeeded, :failed)',
    ExpressionAttributeNames: { '#status': 'status' },
    ExpressionAttributeValues: {
      ':status': report.status,
      ':now': new Date().toISOString(),
      ':agentId': agentId,
      ':succeeded': 'succeeded',
      ':failed': 'failed',
      ...(report.message === undefined ? {} : { ':message': report.message }),
    },
  };
  if (alongside.length > 0) {
    // A transaction answers no item: the run is read again, as it is now, either way.
    const { written } = await transaction<'run' | AlongsideName>().add('run', { Update: update }).include(alongside).commit();
    const run = await findRun(tenantId, runId);
    if (written && run) return { updated: run };
    return { refused: run && { agentId: run.agentId, status: run.status } };
  }
  const { written, item: run } = await updateReturning<RunRecord>(update);
  if (written && run) return { updated: run };
  return { refused: run && { agentId: run.agentId, status: run.status } };
}

/** One run, read consistently. */
export function findRun(tenantId: number, runId: number): Promise<RunRecord | undefined> {
  return getItem<RunRecord>(stored.run.key({ tenantId, runId }));
}

/** GET /tenant/runs' filters: the runs of one status, agent and flow (each when given). */
export interface RunFilter {
  status?: RunStatus;
  agentId?: number;
  flowId?: number;
}

/** Whether a run passes every filter given. */
const passes = (filter: RunFilter) => (run: RunRecord) =>
  (filter.status === undefined || run.status === filter.status) &&
  (filter.agentId === undefined || run.agentId === filter.agentId) &&
  (filter.flowId === undefined || run.flowId === filter.flowId);

/** The tenant's runs, newest first; only those `filter` names, when it names any (a filtered page: queryFilteredPage). */
export function listRunsPage(
  tenantId: number,
  filter: RunFilter,
  limit: number,
  cursor: string | undefined,
): Promise<Page<RunRecord>> {
  const list = {
    partition: stored.run.partition({ tenantId }),
    prefix: stored.run.keyPrefix({}),
    limit,
    cursor,
    newestFirst: true,
  };
  const filtered = Object.values(filter).some((value) => value !== undefined);
  return filtered ? queryFilteredPage<RunRecord>({ ...list, keep: passes(filter) }) : queryPage<RunRecord>(list);
}
