import { UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { newTokenWrite, revokeTokenWrite } from '#functions/core/auth/token-repository.ts';
import { hashToken, newToken } from '#functions/core/auth/tokens.ts';
import {
  db,
  getItem,
  nextTenantId,
  queryAll,
  tableName,
  transact,
  transactOrReasons,
  type TransactItem,
} from '#functions/core/store/dynamo.ts';
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

/** The claim that makes an agent's name unique in its tenant. */
const nameClaim = (tenantId: number, nome: string, agentId: number): TransactItem => ({
  Put: {
    TableName: tableName(),
    Item: { ...keys.agentName(tenantId, nome), agentId },
    ConditionExpression: 'attribute_not_exists(pk)',
  },
});

/**
 * The items that give a new tenant its default agent (id 1), for the tenant's transaction; they also
 * start the tenant's agent counter at 1 (so that this id costs no extra round trip), its agent
 * count at 1, and claim the name `default`.
 */
export function defaultAgentItems(tenantId: number, clientId: number, createdAt: string): TransactItem[] {
  const token = newToken('agent');
  return [
    ...newAgentItems({ agentId: 1, tenantId, clientId, nome: defaultAgentName, isDefault: true }, token, createdAt),
    { Put: { TableName: tableName(), Item: { ...keys.tenantCounter(tenantId, 'agent'), value: 1 } } },
    { Put: { TableName: tableName(), Item: { ...keys.agentCount(tenantId), value: 1 } } },
    nameClaim(tenantId, defaultAgentName, 1),
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

/** The tenant's agent count; undefined for a tenant made before the count was kept. */
export async function findAgentCount(tenantId: number): Promise<number | undefined> {
  return (await getItem<{ value: number }>(keys.agentCount(tenantId)))?.value;
}

/**
 * Writes a new agent, its token, the claim on its name and the tenant's agent count, with
 * `alongside`, together. The name claim and the count's condition are what keep names unique and
 * the count within `max` whatever runs at the same time. For a tenant made before the count and
 * the claims were kept, `existing` (its agents, read just before) starts them in the same commit;
 * `recount` when another creation started them first.
 */
export async function insertAgent(
  agent: Omit<AgentRecord, 'tokenHash' | 'createdAt'>,
  token: string,
  limit: { max: number; existing?: readonly AgentRecord[] },
  alongside: readonly TransactItem[],
): Promise<'written' | 'name_taken' | 'limit_reached' | 'recount'> {
  const countKey = keys.agentCount(agent.tenantId);
  const counting: TransactItem[] = limit.existing
    ? [
        {
          Put: {
            TableName: tableName(),
            Item: { ...countKey, value: limit.existing.length + 1 },
            ConditionExpression: 'attribute_not_exists(pk)',
          },
        },
        ...[...new Map(limit.existing.map((old) => [old.nome, old.agentId]))].map(([nome, agentId]) =>
          nameClaim(agent.tenantId, nome, agentId),
        ),
      ]
    : [
        {
          Update: {
            TableName: tableName(),
            Key: countKey,
            UpdateExpression: 'ADD #value :one',
            ConditionExpression: '#value < :max',
            ExpressionAttributeNames: { '#value': 'value' },
            ExpressionAttributeValues: { ':one': 1, ':max': limit.max },
          },
        },
      ];
  const items = [
    nameClaim(agent.tenantId, agent.nome, agent.agentId),
    ...counting,
    ...newAgentItems(agent, token, new Date().toISOString()),
    ...alongside,
  ];
  if (limit.existing && limit.existing.length >= limit.max) return 'limit_reached';
  const outcome = await transactOrReasons(items);
  if (outcome.written) return 'written';
  if (outcome.failedConditions.includes(0)) return 'name_taken';
  // Another creation started the count (and the claims) first: read it again.
  if (limit.existing) return 'recount';
  if (outcome.failedConditions.includes(1)) return 'limit_reached';
  throw new Error(`Agent ${agent.agentId} of tenant ${agent.tenantId} or its token already exists`);
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
