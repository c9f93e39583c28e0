import { GetCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { newTokenWrite, revokeTokenWrite } from '../auth/token-repository.ts';
import { hashToken, newToken } from '../auth/tokens.ts';
import { conflict, notFound } from '../errors.ts';
import { allocateIds, db, queryAll, tableName, transact } from '../store/dynamo.ts';
import { keys } from '../store/keys.ts';

/** An ETL agent of a tenant. Its integer id is the `tokenId` of reload items (spec 2.6). */
export interface AgentRecord {
  agentId: number;
  tenantId: number;
  clientId: number;
  nome: string;
  /** The agent made with the tenant; connections without an agent slot run on it. */
  isDefault: boolean;
  tokenHash: string;
  createdAt: string;
  lastSeenAt?: string;
}

export const defaultAgentName = 'default';
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

/**
 * The items that create an agent and its token, for a caller's transaction. The first agent of a
 * tenant also creates the tenant's agent counter, so that its id (1) costs no extra round trip.
 */
export function newAgentItems(agent: Omit<AgentRecord, 'tokenHash' | 'createdAt'>, token: string, createdAt: string) {
  const record: AgentRecord = { ...agent, tokenHash: hashToken(token), createdAt };
  return [
    {
      Put: {
        TableName: tableName(),
        Item: { ...record, ...keys.agent(agent.tenantId, agent.agentId) },
        ConditionExpression: 'attribute_not_exists(pk)',
      },
    },
    newTokenWrite(token, { kind: 'agent', clientId: agent.clientId, tenantId: agent.tenantId, agentId: agent.agentId }),
  ];
}

/** The items that give a new tenant its default agent (id 1). */
export function defaultAgentItems(tenantId: number, clientId: number, createdAt: string) {
  const token = newToken('agent');
  return [
    ...newAgentItems({ agentId: 1, tenantId, clientId, nome: defaultAgentName, isDefault: true }, token, createdAt),
    { Put: { TableName: tableName(), Item: { ...keys.tenantCounter(tenantId, 'agent'), value: 1 } } },
  ];
}

export function listAgents(tenantId: number): Promise<AgentRecord[]> {
  return queryAll<AgentRecord>(keys.tenant(tenantId).pk, keys.agentsPrefix);
}

export async function findAgent(tenantId: number, agentId: number): Promise<AgentRecord | undefined> {
  const result = await db().send(
    new GetCommand({ TableName: tableName(), Key: keys.agent(tenantId, agentId), ConsistentRead: true }),
  );
  return result.Item as AgentRecord | undefined;
}

/** POST /tenant/agents: a new agent; its token is shown only in this answer. */
export async function createAgent(tenantId: number, clientId: number, nome: string) {
  // The name is the slot template connections refer to: two agents with one name would be ambiguous.
  if ((await listAgents(tenantId)).some((agent) => agent.nome === nome)) {
    throw conflict(`The tenant already has an agent named ${JSON.stringify(nome)}`, 'agent_name_taken');
  }
  const [agentId] = (await allocateIds(keys.tenantCounter(tenantId, 'agent'), 1)) as [number];
  if (agentId > maxAgentsPerTenant) throw conflict(`A tenant has at most ${maxAgentsPerTenant} agents`, 'agent_limit');
  const token = newToken('agent');
  const written = await transact(
    newAgentItems({ agentId, tenantId, clientId, nome, isDefault: false }, token, new Date().toISOString()),
  );
  if (!written) throw new Error(`Agent ${agentId} of tenant ${tenantId} already exists`);
  return { id: agentId, nome, token };
}

/** A new token for an agent (the way to obtain the default agent's); the old one stops at once. */
export async function rotateAgentToken(tenantId: number, agentId: number): Promise<{ id: number; token: string }> {
  const token = newToken('agent');
  for (let attempt = 0; attempt < 3; attempt++) {
    const agent = await findAgent(tenantId, agentId);
    if (!agent) throw notFound('Agent not found');
    const written = await transact([
      {
        Update: {
          TableName: tableName(),
          Key: keys.agent(tenantId, agentId),
          UpdateExpression: 'SET tokenHash = :newHash',
          ConditionExpression: 'tokenHash = :oldHash',
          ExpressionAttributeValues: { ':newHash': hashToken(token), ':oldHash': agent.tokenHash },
        },
      },
      revokeTokenWrite(agent.tokenHash),
      newTokenWrite(token, { kind: 'agent', clientId: agent.clientId, tenantId, agentId }),
    ]);
    if (written) return { id: agentId, token };
  }
  throw conflict('The agent changed while this request ran; retry it');
}

/** Records a heartbeat: the agent counts as online for the next two minutes. */
export async function recordHeartbeat(tenantId: number, agentId: number, at: string): Promise<void> {
  await db().send(
    new UpdateCommand({
      TableName: tableName(),
      Key: keys.agent(tenantId, agentId),
      UpdateExpression: 'SET lastSeenAt = :at',
      ConditionExpression: 'attribute_exists(pk)',
      ExpressionAttributeValues: { ':at': at },
    }),
  );
}
