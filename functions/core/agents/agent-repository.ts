import { UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { newTokenWrite, revokeTokenWrite } from '#functions/core/auth/token-repository.ts';
import { hashToken, newToken } from '#functions/core/auth/tokens.ts';
import { nextTenantId, db, getItem, queryAll, tableName, transact } from '#functions/core/store/dynamo.ts';
import { keys } from '#functions/core/store/keys.ts';

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

const defaultAgentName = 'default';

/** The items that create an agent and its token, for a transaction. */
function newAgentItems(agent: Omit<AgentRecord, 'tokenHash' | 'createdAt'>, token: string, createdAt: string) {
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

/**
 * The items that give a new tenant its default agent (id 1), for the tenant's transaction; they also
 * start the tenant's agent counter at 1, so that this id costs no extra round trip.
 */
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
  return getItem<AgentRecord>(keys.agent(tenantId, agentId));
}

/** The next agent id of the tenant (ids are never reused). */
export function allocateAgentId(tenantId: number): Promise<number> {
  return nextTenantId(tenantId, 'agent');
}

/** Writes a new agent and its token together; `false` when either already exists. */
export function insertAgent(agent: Omit<AgentRecord, 'tokenHash' | 'createdAt'>, token: string): Promise<boolean> {
  return transact(newAgentItems(agent, token, new Date().toISOString()));
}

/** Gives the agent the token `token` and revokes its old one, together; `false` when the agent's token changed since it was read. */
export function replaceAgentToken(agent: AgentRecord, token: string): Promise<boolean> {
  return transact([
    {
      Update: {
        TableName: tableName(),
        Key: keys.agent(agent.tenantId, agent.agentId),
        UpdateExpression: 'SET tokenHash = :newHash',
        ConditionExpression: 'tokenHash = :oldHash',
        ExpressionAttributeValues: { ':newHash': hashToken(token), ':oldHash': agent.tokenHash },
      },
    },
    revokeTokenWrite(agent.tokenHash),
    newTokenWrite(token, { kind: 'agent', clientId: agent.clientId, tenantId: agent.tenantId, agentId: agent.agentId }),
  ]);
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
