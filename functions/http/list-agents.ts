import { httpHandler } from '../core/api/http-handler.ts';
import { tenantIdOf } from '../core/auth/principals.ts';
import { listAgents } from '../core/agents/agent-repository.ts';
import { describeAgent } from '../core/agents/agents.ts';

export const handler = httpHandler(async ({ principal }) => {
  const now = Date.now();
  const agents = await listAgents(tenantIdOf(principal));
  return { status: 200, body: { status: 'success', data: agents.map((agent) => describeAgent(agent, now)) } };
});
