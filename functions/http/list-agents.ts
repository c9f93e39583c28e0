import { httpHandler } from '#functions/core/api/http-handler.ts';
import { tenantIdOf } from '#functions/core/auth/principals.ts';
import { listAgents } from '#functions/core/agents/agent-repository.ts';
import { describeAgent } from '#functions/core/agents/agents.ts';

export const handler = httpHandler(async ({ principal }) => {
  const now = Date.now();
  const agents = await listAgents(tenantIdOf(principal));
  return { status: 200, body: { status: 'success', data: agents.map((agent) => describeAgent(agent, now)) } };
});
