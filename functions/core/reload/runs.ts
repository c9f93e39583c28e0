import type { ReportRunBody } from '#functions/core/api/validators/report-run.cjs';
import { conflict, notFound } from '#functions/core/errors.ts';
import { mapPage, type Page } from '#functions/core/store/dynamo.ts';
import { expiresAt } from '#functions/core/store/retention.ts';
import { findTenant, tenantInactive, tenantNotFound } from '#functions/core/tenants/tenant-repository.ts';
import { listAgents } from '#functions/core/agents/agent-repository.ts';
import { loadResourcesOfType } from '#functions/core/templates/template-repository.ts';
import { type LoadMessage, queueLoads } from './reload.ts';
import { clientEventWrites, noEvents } from '#functions/core/events/client-events.ts';
import {
  allocateRunId,
  findRun,
  insertRun,
  listRunsPage,
  loadRecorded,
  type RunFilter,
  type RunRecord,
  updateRunStatus,
} from './run-repository.ts';

const runNotFound = () => notFound('Run not found', 'run_not_found');

/** What the tenant and the agent see of a run (`tokenId` as in spec 2.6). */
export const describeRun = (run: RunRecord) => ({
  id: run.runId,
  flowId: run.flowId,
  tokenId: run.agentId,
  context: run.context,
  status: run.status,
  message: run.message ?? null,
  batchId: run.batchId,
  ...(run.requestId === undefined ? {} : { requestId: run.requestId }),
  ...(run.retryOf === undefined ? {} : { retryOf: run.retryOf }),
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
  if (await loadRecorded(load.tenantId, load.deduplicationId)) return 'duplicate';
  const runId = await allocateRunId(load.tenantId);
  const now = Date.now();
  const run: RunRecord = {
    runId,
    tenantId: load.tenantId,
    agentId: load.agentId,
    flowId: load.flowId,
    context: load.context,
    batchId: load.batchId,
    ...(load.requestId === undefined ? {} : { requestId: load.requestId }),
    ...(load.retryOf === undefined ? {} : { retryOf: load.retryOf }),
    status: 'dispatched',
    createdAt: new Date(now).toISOString(),
    updatedAt: new Date(now).toISOString(),
    expiresAt: expiresAt('runRetentionDays', now),
  };
  const written = await insertRun(run, load.deduplicationId);
  return written ? 'recorded' : 'duplicate';
}

/** The agent reporting, by its token. */
export interface Reporter {
  clientId: number;
  tenantId: number;
  agentId: number;
}

/**
 * An agent reports on one of its runs: `running`, then `succeeded` or `failed`. A run leaves the
 * agent's pending list at its first report. Another agent's run is 404; a finished one is 409. A
 * failure is the integrator's `run.failed` event, committed with the report (so sent once, by the
 * report that finished the run), its delivery keeping the report's `requestId`.
 */
export async function reportRun(
  { clientId, tenantId, agentId }: Reporter,
  runId: number,
  report: ReportRunBody,
  requestId?: string,
): Promise<RunRecord> {
  const events = report.status === 'failed' ? await failedRunEvents(clientId, tenantId, runId, report, requestId) : noEvents;
  const outcome = await updateRunStatus(tenantId, agentId, runId, report, events.items);
  if ('updated' in outcome) {
    await events.afterCommit();
    return outcome.updated;
  }
  if (outcome.refused?.agentId !== agentId) throw runNotFound();
  throw conflict(`The run already ${outcome.refused.status}; a finished run cannot change`, 'run_finished');
}

/** The `run.failed` event of a failure report, from the run as it is (none for a run that is not there: the report is refused). */
async function failedRunEvents(
  clientId: number,
  tenantId: number,
  runId: number,
  report: ReportRunBody,
  requestId: string | undefined,
) {
  const run = await findRun(tenantId, runId);
  if (!run) return noEvents;
  const { agentId, flowId, batchId, context } = run;
  const message = report.message ?? run.message ?? null;
  return clientEventWrites(
    clientId,
    [{ type: 'run.failed', data: { tenantId, runId, agentId, flowId, batchId, context, message } }],
    requestId,
  );
}

/** GET /tenant/runs: newest first; only the runs `filter` names, when it names any. */
export async function listRuns(
  tenantId: number,
  filter: RunFilter,
  limit: number,
  cursor: string | undefined,
): Promise<Page<ReturnType<typeof describeRun>>> {
  const page = await listRunsPage(tenantId, filter, limit, cursor);
  return mapPage(page, describeRun);
}

/** GET /tenant/runs/{id}: one of the tenant's runs (404 once it has expired, as for another tenant's). */
export async function getRun(tenantId: number, runId: number): Promise<ReturnType<typeof describeRun>> {
  const run = await findRun(tenantId, runId);
  if (!run) throw runNotFound();
  return describeRun(run);
}

/** What POST /tenant/runs/{id}/retry answers: the load it queued, and the run it retries. */
export interface RunRetry {
  retryOf: number;
  flowId: number;
  tokenId: number;
  context: string;
  batchId: string;
  status: 'enqueued';
}

/**
 * POST /tenant/runs/{id}/retry: a failed run's load once more, queued as a reload of its flow
 * queues it (the same agent and context, on the agent's FIFO queue, `batchId` making its
 * deduplication id); the reload worker makes it a new run whose `retryOf` names this one. The failed
 * run stays as it is, so each retry queues one load: an Idempotency-Key makes a retry safe to send
 * again. Refused with nothing queued: a run that is not failed (409 `run_not_failed`), an inactive
 * tenant (409), an agent with no heartbeat in the last 2 minutes (409 `agent_offline`, as a reload
 * would skip it).
 */
export async function retryRun(tenantId: number, runId: number, batchId: string, requestId?: string): Promise<RunRetry> {
  const [tenant, run, flows, agents] = await Promise.all([
    findTenant(tenantId),
    findRun(tenantId, runId),
    loadResourcesOfType(tenantId, 'flow'),
    listAgents(tenantId),
  ]);
  if (!tenant || tenant.deletedAt) throw tenantNotFound();
  if (!run) throw runNotFound();
  if (run.status !== 'failed') {
    throw conflict(`Only a failed run can be retried; this one is ${run.status}`, 'run_not_failed');
  }
  if (!tenant.ativo) throw tenantInactive();
  const load = { flowId: run.flowId, tokenId: run.agentId, context: run.context, retryOf: runId };
  const [status] = await queueLoads({ tenant, flows, agents }, [load], batchId, requestId);
  if (status !== 'enqueued') {
    throw conflict(
      `Agent ${run.agentId} is offline (no heartbeat in the last 2 minutes), so nothing was queued: retry once it is online`,
      'agent_offline',
    );
  }
  return { retryOf: runId, flowId: run.flowId, tokenId: run.agentId, context: run.context, batchId, status };
}
