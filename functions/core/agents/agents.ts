import { newToken } from '#functions/core/auth/tokens.ts';
import { conflict, notFound } from '#functions/core/errors.ts';
import { type AgentRecord, allocateAgentId, findAgent, insertAgent, listAgents, replaceAgentToken } from './agent-repository.ts';

export const maxAgentsPerTenant = 50;
/** An agent is online when its last heartbeat is this recent (DESIGN 7). */
export const onlineWindowMs = 2 * 60 * 1000;

export const isOnline = (agent: Pick<AgentRecord, 'lastSeenAt'>, now = Date.now()) =>
  agent.lastSeenAt !== undefined && now - Date.parse(agent.lastSeenAt) < onlineWindowMs;

export const describeAgent = (agent: AgentRecord, now = Date.now()) => ({
  id: agent.agentId,
  nome: agent.nome,
  default: agent.isDefault,
  online: isOnline(agent, now),
  lastSeenAt: agent.lastSeenAt ?? null,
});

/** POST /tenant/agents: a new agent; its token is shown only in this answer. */
export async function createAgent(tenantId: number, clientId: number, nome: string) {
  // The name is the slot template connections refer to: two agents with one name would be ambiguous.
  if ((await listAgents(tenantId)).some((agent) => agent.nome === nome)) {
    throw conflict(`The tenant already has an agent named ${JSON.stringify(nome)}`, 'agent_name_taken');
  }
  const agentId = await allocateAgentId(tenantId);
  if (agentId > maxAgentsPerTenant) throw conflict(`A tenant has at most ${maxAgentsPerTenant} agents`, 'agent_limit');
  const token = newToken('agent');
  const written = await insertAgent({ agentId, tenantId, clientId, nome, isDefault: false }, token);
  if (!written) throw new Error(`Agent ${agentId} of tenant ${tenantId} already exists`);
  return { id: agentId, nome, token };
}

/** A new token for an agent (the way to obtain the default agent's); the old one stops at once. */
export async function rotateAgentToken(tenantId: number, agentId: number): Promise<{ id: number; token: string }> {
  const token = newToken('agent');
  for (let attempt = 0; attempt < 3; attempt++) {
    const agent = await findAgent(tenantId, agentId);
    if (!agent) throw notFound('Agent not found');
    const written = await replaceAgentToken(agent, token);
    if (written) return { id: agentId, token };
  }
  throw conflict('The agent changed while this request ran; retry it');
}
