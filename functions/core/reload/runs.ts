import { ConditionalCheckFailedException } from '@aws-sdk/client-dynamodb';
import { GetCommand, QueryCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import type { ReportRunBody } from '../api/validators/report-run.cjs';
import { conflict, notFound } from '../errors.ts';
import { allocateIds, db, type Page, queryPage, tableName, transact } from '../store/dynamo.ts';
import { keys } from '../store/keys.ts';
import { findTenant, type TenantRecord } from '../tenants/tenant-repository.ts';
import type { LoadMessage } from './reload.ts';

/** `dispatched` until the agent reports the others. */
export type RunStatus = 'dispatched' | ReportRunBody['status'];
export const finishedStatuses: readonly RunStatus[] = ['succeeded', 'failed'];

/** One load handed to an agent: created `dispatched` by the reload worker, then reported by the agent. */
export interface RunRecord {
  runId: number;
  tenantId: number;
  agentId: number;
  flowId: number;
  context: string;
  variables: TenantRecord['developmentVariables'];
  batchId: string;
  status: RunStatus;
  message?: string;
  createdAt: string;
  updatedAt: string;
}

/** How long the record that a queued load was already turned into a run is kept. */
const recordedLoadRetentionSeconds = 7 * 24 * 60 * 60;

/** What the tenant and the agent see of a run (`tokenId` as in spec 2.6). */
export const describeRun = (run: RunRecord) => ({
  id: run.runId,
  flowId: run.flowId,
  tokenId: run.agentId,
  context: run.context,
  status: run.status,
  message: run.message ?? null,
  batchId: run.batchId,
  createdAt: run.createdAt,
  updatedAt: run.updatedAt,
});

/**
 * Turns a queued load into a `dispatched` run on the agent's pending list. Idempotent: SQS may
 * deliver a message twice, and a marker written in the same transaction makes the second a no-op.
 * Loads of a tenant deleted since they were queued are dropped.
 */
export async function recordDispatchedRun(load: LoadMessage): Promise<'recorded' | 'duplicate' | 'tenant_gone'> {
  const tenant = await findTenant(load.tenantId);
  if (!tenant || tenant.deletedAt) return 'tenant_gone';
  const marker = keys.recordedLoad(load.tenantId, load.deduplicationId);
  const seen = await db().send(new GetCommand({ TableName: tableName(), Key: marker, ConsistentRead: true }));
  if (seen.Item) return 'duplicate';
  const [runId] = (await allocateIds(keys.tenantCounter(load.tenantId, 'run'), 1)) as [number];
  const now = new Date().toISOString();
  const run: RunRecord = {
    runId,
    tenantId: load.tenantId,
    agentId: load.agentId,
    flowId: load.flowId,
    context: load.context,
    variables: load.variables,
    batchId: load.batchId,
    status: 'dispatched',
    createdAt: now,
    updatedAt: now,
  };
  const written = await transact([
    {
      Put: {
        TableName: tableName(),
        Item: { ...marker, runId, expiresAt: Math.floor(Date.now() / 1000) + recordedLoadRetentionSeconds },
        ConditionExpression: 'attribute_not_exists(pk)',
      },
    },
    {
      Put: {
        TableName: tableName(),
        Item: { ...run, ...keys.run(load.tenantId, runId), ...keys.agentPendingRunsIndex(load.tenantId, load.agentId, runId) },
      },
    },
  ]);
  return written ? 'recorded' : 'duplicate';
}

/** The runs dispatched to an agent and not yet taken, oldest first. */
export async function pendingRuns(tenantId: number, agentId: number, limit = 50): Promise<RunRecord[]> {
  const result = await db().send(
    new QueryCommand({
      TableName: tableName(),
      IndexName: 'gsi1',
      KeyConditionExpression: 'gsi1pk = :pending',
      ExpressionAttributeValues: { ':pending': keys.agentPendingRunsIndex(tenantId, agentId, 0).gsi1pk },
      Limit: limit,
    }),
  );
  return (result.Items ?? []) as RunRecord[];
}

/**
 * An agent reports on one of its runs: `running`, then `succeeded` or `failed`. A run leaves the
 * agent's pending list at its first report. Another agent's run is 404; a finished one is 409.
 */
export async function reportRun(tenantId: number, agentId: number, runId: number, report: ReportRunBody): Promise<RunRecord> {
  try {
    const result = await db().send(
      new UpdateCommand({
        TableName: tableName(),
        Key: keys.run(tenantId, runId),
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
        ReturnValues: 'ALL_NEW',
        ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
      }),
    );
    return result.Attributes as RunRecord;
  } catch (error) {
    if (!(error instanceof ConditionalCheckFailedException)) throw error;
    const before = error.Item as { agentId?: { N?: string }; status?: { S?: string } } | undefined;
    if (!before || Number(before.agentId?.N) !== agentId) throw notFound('Run not found');
    throw conflict(`The run already ${before.status?.S}; a finished run cannot change`, 'run_finished');
  }
}

/** GET /tenant/runs: newest first. */
export async function listRuns(
  tenantId: number,
  limit: number,
  cursor: string | undefined,
): Promise<Page<ReturnType<typeof describeRun>>> {
  const page = await queryPage<RunRecord>({
    partition: keys.tenant(tenantId).pk,
    prefix: keys.runsPrefix,
    limit,
    cursor,
    newestFirst: true,
  });
  return { items: page.items.map(describeRun), nextCursor: page.nextCursor };
}
