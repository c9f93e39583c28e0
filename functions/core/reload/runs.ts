import type { ReportRunBody } from '#functions/core/api/validators/report-run.cjs';
import { conflict, notFound } from '#functions/core/errors.ts';
import { mapPage, type Page } from '#functions/core/store/dynamo.ts';
import { expiresAt } from '#functions/core/store/retention.ts';
import { findTenant } from '#functions/core/tenants/tenant-repository.ts';
import type { LoadMessage } from './reload.ts';
import { clientEventWrites, noEvents } from '#functions/core/events/client-events.ts';
import {
  allocateRunId,
  findRun,
  insertRun,
  listRunsPage,
  loadRecorded,
  type RunRecord,
  updateRunStatus,
} from './run-repository.ts';

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
 * report that finished the run).
 */
export async function reportRun(
  { clientId, tenantId, agentId }: Reporter,
  runId: number,
  report: ReportRunBody,
): Promise<RunRecord> {
  const events = report.status === 'failed' ? await failedRunEvents(clientId, tenantId, runId, report) : noEvents;
  const outcome = await updateRunStatus(tenantId, agentId, runId, report, events.items);
  if ('updated' in outcome) {
    await events.afterCommit();
    return outcome.updated;
  }
  if (outcome.refused?.agentId !== agentId) throw notFound('Run not found', 'run_not_found');
  throw conflict(`The run already ${outcome.refused.status}; a finished run cannot change`, 'run_finished');
}

/** The `run.failed` event of a failure report, from the run as it is (none for a run that is not there: the report is refused). */
async function failedRunEvents(clientId: number, tenantId: number, runId: number, report: ReportRunBody) {
  const run = await findRun(tenantId, runId);
  if (!run) return noEvents;
  const { agentId, flowId, batchId, context } = run;
  const message = report.message ?? run.message ?? null;
  return clientEventWrites(clientId, [
    { type: 'run.failed', data: { tenantId, runId, agentId, flowId, batchId, context, message } },
  ]);
}

/** GET /tenant/runs: newest first. */
export async function listRuns(
  tenantId: number,
  limit: number,
  cursor: string | undefined,
): Promise<Page<ReturnType<typeof describeRun>>> {
  const page = await listRunsPage(tenantId, limit, cursor);
  return mapPage(page, describeRun);
}
