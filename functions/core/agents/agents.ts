import { type TokenRotated, tokenUseView } from '#functions/core/auth/token-rotation.ts';
import { newToken } from '#functions/core/auth/tokens.ts';
import { conflict, notFound } from '#functions/core/errors.ts';
import { mapPage } from '#functions/core/store/dynamo.ts';
import { type Resumable, unrecorded } from '#functions/core/store/resumable.ts';
import {
  type AgentRecord,
  allocateAgentId,
  endPreviousAgentToken as endPrevious,
  findAgent,
  insertAgent,
  listAgentsPage,
  replaceAgentToken,
} from './agent-repository.ts';

export const maxAgentsPerTenant = 50;
/** An agent is online when its last heartbeat is this recent (DESIGN 7). */
export const onlineWindowMs = 2 * 60 * 1000;

/**
 * When an agent should beat next: a minute, give or take a fifth, drawn afresh on every beat. Agents
 * started together (a fleet rollout, a region coming back) would otherwise beat on the same second
 * forever and arrive as one burst; random intervals spread them over the minute within a few beats.
 * The longest interval is 72 s, well within the online window of 120 s, so one lost beat is forgiven.
 */
export const heartbeatIntervalSeconds = { typical: 60, jitter: 0.2 } as const;

export function nextHeartbeatSeconds(random: () => number = Math.random): number {
  const { typical, jitter } = heartbeatIntervalSeconds;
  return Math.round(typical * (1 - jitter + 2 * jitter * random()));
}

export const isOnline = (agent: Pick<AgentRecord, 'lastSeenAt'>, now = Date.now()) =>
  agent.lastSeenAt !== undefined && now - Date.parse(agent.lastSeenAt) < onlineWindowMs;

export const describeAgent = (agent: AgentRecord, now = Date.now()) => ({
  id: agent.agentId,
  nome: agent.nome,
  default: agent.isDefault,
  online: isOnline(agent, now),
  lastSeenAt: agent.lastSeenAt ?? null,
  ...tokenUseView(agent, now),
});

/** GET /tenant/agents: every agent of the tenant (at most `maxAgentsPerTenant`), or a page of `limit`. */
export async function listAgentViews(tenantId: number, limit: number | undefined, cursor: string | undefined) {
  const now = Date.now();
  return mapPage(await listAgentsPage(tenantId, limit, cursor), (agent) => describeAgent(agent, now));
}

/** POST /tenant/agents' answer: the only one that shows the agent's token. */
export interface AgentCreated {
  id: number;
  nome: string;
  token: string;
}

const nameTaken = (nome: string) => conflict(`The tenant already has an agent named ${JSON.stringify(nome)}`, 'agent_name_taken');
/** What a deleted tenant's token answers (functions/core/auth/principals.ts). */
const tenantNotFound = () => notFound('Tenant not found', 'tenant_not_found');
const limitReached = () => conflict(`A tenant has at most ${maxAgentsPerTenant} agents`, 'agent_limit');

/**
 * POST /tenant/agents: a new agent; its token is shown only in this answer. The name is the slot
 * that template connections refer to, so two agents with one name would be ambiguous: the name is
 * claimed, and the tenant's agent count checked, in the agent's own transaction. So is the tenant:
 * one deleted meanwhile gets no agent (404 `Tenant not found`, as its token now answers).
 */
export async function createAgent(
  tenantId: number,
  clientId: number,
  nome: string,
  record: Resumable<AgentCreated> = unrecorded(),
): Promise<AgentCreated> {
  const agentId = await allocateAgentId(tenantId);
  const token = await newToken('agent', { clientId, tenantId, agentId });
  const created: AgentCreated = { id: agentId, nome, token };
  const outcome = await insertAgent(
    { agentId, tenantId, clientId, nome, isDefault: false },
    token,
    maxAgentsPerTenant,
    record.finish(created),
  );
  if (outcome === 'written') return created;
  if (outcome === 'name_taken') throw nameTaken(nome);
  if (outcome === 'limit_reached') throw limitReached();
  throw tenantNotFound();
}

const agentNotFound = () => notFound('Agent not found', 'agent_not_found');
const agentChanged = () => conflict('The agent changed while this request ran; retry it', 'concurrent_change');

/**
 * A new token for an agent (the way to obtain the default agent's); the old one keeps working for
 * `previousValidForSeconds` (a day when not given; 0: it stops at once), ending the previous token an
 * earlier rotation kept. A tenant deleted meanwhile is 404 `Tenant not found`: the rotation's
 * transaction checks it.
 */
export async function rotateAgentToken(
  tenantId: number,
  agentId: number,
  previousValidForSeconds?: number,
): Promise<TokenRotated> {
  let token: string | undefined;
  let grace = previousValidForSeconds;
  for (let attempt = 0; attempt < 3; attempt++) {
    const agent = await findAgent(tenantId, agentId);
    if (!agent) throw agentNotFound();
    // Signed for the agent's owner ids, as read (the client's id is on the agent, not in the path).
    token ??= await newToken('agent', { clientId: agent.clientId, tenantId, agentId });
    const outcome = await replaceAgentToken(agent, token, grace);
    if (typeof outcome === 'object') return { id: agentId, token, ...outcome };
    if (outcome === 'tenant_gone') throw tenantNotFound();
    // The old token's item is gone: there is nothing left to keep working.
    if (outcome === 'replaced_missing') grace = 0;
  }
  throw agentChanged();
}

/** Ends the agent's previous token now; `ended` says whether one still worked (none is no error). */
export async function endPreviousAgentToken(tenantId: number, agentId: number): Promise<{ id: number; ended: boolean }> {
  for (let attempt = 0; attempt < 3; attempt++) {
    const agent = await findAgent(tenantId, agentId);
    if (!agent) throw agentNotFound();
    const outcome = await endPrevious(agent);
    if (outcome !== 'changed') return { id: agentId, ...outcome };
  }
  throw agentChanged();
}
