import { httpHandler } from '#functions/core/api/http-handler.ts';
import { agentOf } from '#functions/core/auth/principals.ts';
import { recordHeartbeat } from '#functions/core/agents/agent-repository.ts';
import { nextHeartbeatSeconds } from '#functions/core/agents/agents.ts';
import { pendingRuns } from '#functions/core/reload/run-repository.ts';
import { describeRun } from '#functions/core/reload/runs.ts';

/**
 * The agent is online for two minutes, gets the loads dispatched to it, oldest first, and when to
 * beat next (jittered, so a fleet spreads over the minute).
 */
export const handler = httpHandler(async ({ principal }) => {
  const { tenantId, agentId } = agentOf(principal);
  const now = new Date().toISOString();
  await recordHeartbeat(tenantId, agentId, now);
  const runs = await pendingRuns(tenantId, agentId);
  return {
    status: 200,
    body: {
      status: 'success',
      data: {
        agentId,
        serverTime: now,
        nextHeartbeatInSeconds: nextHeartbeatSeconds(),
        runs: runs.map((run) => ({ ...describeRun(run), variables: run.variables })),
      },
    },
  };
});
