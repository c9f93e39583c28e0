import { httpHandler } from '#functions/core/api/http-handler.ts';
import { agentOf } from '#functions/core/auth/principals.ts';
import { recordHeartbeat } from '#functions/core/agents/agent-repository.ts';
import { nextHeartbeatSeconds } from '#functions/core/agents/agents.ts';
import { pendingRuns } from '#functions/core/reload/run-repository.ts';
import { describeRun } from '#functions/core/reload/runs.ts';
import { findTenant } from '#functions/core/tenants/tenant-repository.ts';

/**
 * The agent is online for two minutes, gets the loads dispatched to it, oldest first, and when to
 * beat next (jittered, so a fleet spreads over the minute). The loads come with the tenant's
 * development_variables once (`variables`), as they are when the agent takes them, the moment their
 * runs start: runs keep no copy of them, and the tenant is read only when a load is waiting (most
 * beats find none). As many loads as fit in one answer: the rest stay pending for the next beat.
 */
export const handler = httpHandler(async ({ principal }) => {
  const { tenantId, agentId } = agentOf(principal);
  const now = new Date().toISOString();
  await recordHeartbeat(tenantId, agentId, now);
  const pending = await pendingRuns(tenantId, agentId);
  const tenant = pending.length > 0 ? await findTenant(tenantId) : undefined;
  // A beat racing its tenant's deletion (which revokes the agents' tokens) gets nothing to run, as
  // the reload worker drops the loads of a deleted tenant.
  const variables = tenant && !tenant.deletedAt ? tenant.developmentVariables : undefined;
  const runs = variables ? pending.map(describeRun) : [];
  const body = (count: number) => ({
    status: 'success',
    data: {
      agentId,
      serverTime: now,
      nextHeartbeatInSeconds: nextHeartbeatSeconds(),
      runs: runs.slice(0, count),
      ...(count > 0 ? { variables } : {}),
    },
  });
  return { status: 200, body: body(runs.length), shortenable: { items: runs.length, body } };
});
