import { UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { newTokenWrite, type TokenOwner } from '#functions/core/auth/token-repository.ts';
import { type OwnedTokens, previousTokenEnd, tokenRotation } from '#functions/core/auth/token-rotation.ts';
import { hashToken, newToken } from '#functions/core/auth/tokens.ts';
import { claimWrites } from '#functions/core/store/claims.ts';
import { countedTransaction, readCount } from '#functions/core/store/counts.ts';
import {
  db,
  getAll,
  getItem,
  nextTenantId,
  type Page,
  queryList,
  tableName,
  type TransactItem,
} from '#functions/core/store/dynamo.ts';
import * as stored from '#functions/core/store/entity-declarations.ts';
import { type Alongside, type AlongsideName, transaction } from '#functions/core/store/transaction.ts';

/** An ETL agent of a tenant. Its integer id is the `tokenId` of reload items (spec 2.6). */
export interface AgentRecord extends OwnedTokens {
  agentId: number;
  tenantId: number;
  clientId: number;
  nome: string;
  /** The agent made with the tenant; connections without an agent slot run on it. */
  isDefault: boolean;
  createdAt: string;
  lastSeenAt?: string;
}

const defaultAgentName = 'default';

/**
 * For the transaction that gives an agent of an existing tenant a token (its creation, a rotation):
 * the tenant is there, not deleted, and no deletion has claimed it (`claimDeletion` in
 * tenant-repository.ts; a claim lasts until the deleting function's deadline). The deletion revokes
 * the tokens it lists in one transaction, conditional on the agents being as listed
 * (`agentRevocationItems`): whichever of the two commits second sees the first, so no agent token
 * is made for a deleted tenant or outlives its deletion; and the claim keeps a stream of creations
 * and rotations from making the deletion read again and again, and give up.
 */
const tenantStaysLive = (tenantId: number): TransactItem => ({
  ConditionCheck: {
    TableName: tableName(),
    Key: stored.tenant.key({ tenantId }),
    ConditionExpression:
      'attribute_exists(pk) AND attribute_not_exists(deletedAt) AND (attribute_not_exists(deletingUntil) OR deletingUntil < :now)',
    ExpressionAttributeValues: { ':now': Date.now() },
  },
});

/** An agent to create: what its creator says of it (its token's fields and date come with its items). */
type NewAgent = Omit<AgentRecord, keyof OwnedTokens | 'createdAt'>;

/**
 * The owner of an agent's new token, for a transaction that holds the tenant live (`tenantStaysLive`,
 * or the tenant's own creation): marked `revokedWithTenant`, since the tenant's deletion revokes it
 * (`agentRevocationItems`), so authenticating with it reads nothing but its item.
 */
const agentTokenOwner = ({
  clientId,
  tenantId,
  agentId,
}: Pick<AgentRecord, 'clientId' | 'tenantId' | 'agentId'>): TokenOwner => ({
  kind: 'agent',
  clientId,
  tenantId,
  agentId,
  revokedWithTenant: true,
});

/** The items that create an agent and its token, for a transaction. */
function newAgentItems(agent: NewAgent, token: string, createdAt: string) {
  const record: AgentRecord = { ...agent, tokenHash: hashToken(token), tokensLastUsedAt: {}, createdAt };
  return [
    {
      Put: {
        TableName: tableName(),
        Item: { ...record, ...stored.agent.key(agent) },
        ConditionExpression: 'attribute_not_exists(pk)',
      },
    },
    newTokenWrite(token, agentTokenOwner(agent)),
  ];
}

/** The claim that makes an agent's name unique in its tenant. */
const nameClaims = claimWrites(stored.agentName, stored.agent);

/**
 * The items that give a new tenant its default agent (id 1), for the tenant's transaction; they also
 * start the tenant's agent counter at 1 (so that this id costs no extra round trip), its agent
 * count at 1, and claim the name `default`.
 */
export async function defaultAgentItems(tenantId: number, clientId: number, createdAt: string): Promise<TransactItem[]> {
  const token = await newToken('agent', { clientId, tenantId, agentId: 1 });
  return [
    ...newAgentItems({ agentId: 1, tenantId, clientId, nome: defaultAgentName, isDefault: true }, token, createdAt),
    { Put: { TableName: tableName(), Item: { ...stored.tenantIdCounter.key({ tenantId, name: 'agent' }), value: 1 } } },
    { Put: { TableName: tableName(), Item: { ...stored.agentCount.key({ tenantId }), value: 1 } } },
    ...nameClaims.take({ tenantId, nome: defaultAgentName }, 1),
  ];
}

/** The tenant's agents, by id: all of them, or a page of `limit` (`maxAgentsPerTenant` bounds the whole list). */
export function listAgentsPage(
  tenantId: number,
  limit: number | undefined,
  cursor: string | undefined,
): Promise<Page<AgentRecord>> {
  return queryList<AgentRecord>({
    partition: stored.agent.partition({ tenantId }),
    prefix: stored.agent.keyPrefix({}),
    limit,
    cursor,
  });
}

export async function listAgents(tenantId: number): Promise<AgentRecord[]> {
  return (await listAgentsPage(tenantId, undefined, undefined)).items;
}

export async function findAgent(tenantId: number, agentId: number): Promise<AgentRecord | undefined> {
  return getItem<AgentRecord>(stored.agent.key({ tenantId, agentId }));
}

/** The next agent id of the tenant (ids are never reused). */
export function allocateAgentId(tenantId: number): Promise<number> {
  return nextTenantId(tenantId, 'agent');
}

/**
 * For a tenant of an earlier version, which kept neither its agent count nor its agents' name
 * claims (migration 5, migrations/counts-kept.ts): starts the count from its agents, read now, and
 * claims their names, in one commit conditional on none of them existing, as the release before
 * this one still does with the tenant's next agent; `false` when one does (that release started
 * them first). Two agents an earlier version let share a name both stay, and the claim goes to the
 * one listed last (the higher id), as that release's start gives it: nothing reads whom a claim
 * names, only that the name is taken.
 */
export async function startAgentCount(tenantId: number): Promise<boolean> {
  const agents = await listAgents(tenantId);
  const outcome = await transaction<'agentCount' | 'nameClaims'>()
    .add('agentCount', {
      Put: {
        TableName: tableName(),
        Item: { ...stored.agentCount.key({ tenantId }), value: agents.length },
        ConditionExpression: 'attribute_not_exists(pk)',
      },
    })
    .add(
      'nameClaims',
      ...[...new Map(agents.map((agent) => [agent.nome, agent.agentId]))].flatMap(([nome, agentId]) =>
        nameClaims.take({ tenantId, nome }, agentId),
      ),
    )
    .commit();
  return outcome.written;
}

/**
 * Writes a new agent, its token, the claim on its name and one more on the tenant's agent count,
 * with `alongside`, together, if the tenant is live (`tenant_gone` when it is deleted or being
 * deleted). The name claim and the count's condition are what keep names unique and the count
 * within `max` whatever runs at the same time; the count is also what a deletion racing this
 * creation sees change.
 */
export async function insertAgent(
  agent: NewAgent,
  token: string,
  max: number,
  alongside: Alongside,
): Promise<'written' | 'name_taken' | 'limit_reached' | 'tenant_gone'> {
  const tx = transaction<'tenant' | 'nameClaim' | 'agent' | AlongsideName>()
    .add('tenant', tenantStaysLive(agent.tenantId))
    .add('nameClaim', ...nameClaims.take(agent, agent.agentId))
    .add('agent', ...newAgentItems(agent, token, new Date().toISOString()))
    .include(alongside);
  const outcome = await countedTransaction(stored.agentCount.key(agent), { delta: 1, max }, tx);
  if (outcome.written) return 'written';
  if ('limit' in outcome) return 'limit_reached';
  if (outcome.failed.has('tenant')) return 'tenant_gone';
  if (outcome.failed.has('nameClaim')) return 'name_taken';
  throw new Error(`Agent ${agent.agentId} of tenant ${agent.tenantId} or its token already exists`);
}

/**
 * Gives the agent the token `token`, together, if the tenant is live; the old one keeps working for
 * `previousValidForSeconds` (token-rotation.ts) or stops, and the previous token an earlier rotation
 * kept stops. The previous token's expiry when written (null: none kept); `changed` when the agent's
 * token changed since it was read; `tenant_gone` when the tenant is deleted or being deleted;
 * `replaced_missing` when the old token's item is gone (nothing left to keep: rotate with no grace).
 * The old token's change (an expiry, or its delete) is what a deletion racing this rotation sees.
 */
export async function replaceAgentToken(
  agent: AgentRecord,
  token: string,
  previousValidForSeconds: number | undefined,
): Promise<{ previousExpiresAt: string | null } | 'changed' | 'tenant_gone' | 'replaced_missing'> {
  const rotation = tokenRotation(agent, token, agentTokenOwner(agent), previousValidForSeconds);
  const outcome = await transaction<'tenant' | 'agent' | 'replacedToken' | 'endedToken' | 'newToken'>()
    .add('tenant', tenantStaysLive(agent.tenantId))
    .add('agent', {
      Update: {
        TableName: tableName(),
        Key: stored.agent.key(agent),
        UpdateExpression: rotation.ownerUpdate(),
        ConditionExpression: 'tokenHash = :oldHash',
        ExpressionAttributeValues: { ...rotation.ownerValues, ':oldHash': agent.tokenHash },
      },
    })
    .add('replacedToken', rotation.replacedToken)
    .add('endedToken', ...rotation.endedTokens)
    .add('newToken', rotation.newToken)
    .commit();
  if (outcome.written) return { previousExpiresAt: rotation.previousExpiresAt };
  if (outcome.failed.has('tenant')) return 'tenant_gone';
  return outcome.failed.has('agent') ? 'changed' : 'replaced_missing';
}

/**
 * Ends the agent's previous token now, if it is as read: whether it still worked (false too when it
 * had none); `changed` when its previous token changed since it was read. Whatever the tenant's state:
 * ending a token makes nothing a deletion would have to revoke.
 */
export async function endPreviousAgentToken(agent: AgentRecord): Promise<{ ended: boolean } | 'changed'> {
  const end = previousTokenEnd(agent);
  if (!end) return { ended: false };
  const outcome = await transaction<'agent' | 'endedToken'>()
    .add('agent', {
      Update: {
        TableName: tableName(),
        Key: stored.agent.key(agent),
        UpdateExpression: end.ownerUpdate(),
        ConditionExpression: 'previousTokenHash = :previousTokenHash',
        ExpressionAttributeValues: end.ownerValues,
      },
    })
    .add('endedToken', end.endedToken)
    .commit();
  return outcome.written ? { ended: end.wasLive } : 'changed';
}

/**
 * For the tenant's deletion: the items that revoke every current token of its agents, read now, and
 * hold the transaction to what was read, and the agents with a previous token (which the deletion
 * ends before, outside its transaction). An agent created since makes the count differ from the
 * one read (every tenant has it: its default agent's creation starts it); a token rotated since is
 * gone or now a previous token (it has an expiry), so its delete's condition fails. Either way the
 * deletion reads again; an agent token made after it committed, or after it claimed the tenant, is
 * refused by `tenantStaysLive`. At most 50 agents: one item each, and the count. This is what lets a
 * token item marked `revokedWithTenant` stand for its tenant being live: once the deletion commits,
 * no token its agents name, current or previous, is left, and none is made.
 */
export async function agentRevocationItems(
  tenantId: number,
): Promise<{ items: TransactItem[]; withPreviousTokens: AgentRecord[] }> {
  // The count first, the agents after: an agent created in between is listed, and the count read is still its own.
  const count = await readCount(stored.agentCount.key({ tenantId }));
  const agents = await listAgents(tenantId);
  const tokens = new Set(
    (await getAll<{ pk: string }>(agents.map((agent) => stored.token.key({ tokenHash: agent.tokenHash })))).map(
      (item) => item.pk,
    ),
  );
  const countAsRead: TransactItem = {
    ConditionCheck: {
      TableName: tableName(),
      Key: stored.agentCount.key({ tenantId }),
      ConditionExpression: '#value = :value',
      ExpressionAttributeNames: { '#value': 'value' },
      ExpressionAttributeValues: { ':value': count },
    },
  };
  const items = [
    countAsRead,
    ...agents.map((agent): TransactItem => {
      const tokenKey = stored.token.key({ tokenHash: agent.tokenHash });
      if (tokens.has(tokenKey.pk)) {
        return {
          Delete: {
            TableName: tableName(),
            Key: tokenKey,
            // Still current: a rotation since would have given it an expiry (or deleted it).
            ConditionExpression: 'attribute_exists(pk) AND attribute_not_exists(expiresAt)',
          },
        };
      }
      // No token to revoke (none would ever come back for this hash): the agent must still have this one.
      return {
        ConditionCheck: {
          TableName: tableName(),
          Key: stored.agent.key({ tenantId, agentId: agent.agentId }),
          ConditionExpression: 'tokenHash = :tokenHash',
          ExpressionAttributeValues: { ':tokenHash': agent.tokenHash },
        },
      };
    }),
  ];
  return {
    items,
    withPreviousTokens: agents.filter((agent) => agent.previousTokenHash !== undefined),
  };
}

/**
 * Migration 9: marks an agent token an earlier release made (no `revokedWithTenant`), so that
 * authenticating with it reads its item alone. Only while its agent names it (its current or
 * previous token: what the deletion revokes) and its tenant is live and unclaimed, all checked in the
 * commit that marks it, as an agent token is made. One that fails a check stays as it is: it is
 * checked against its tenant on every request, as before.
 */
export async function markEarlierAgentToken(token: { pk: string; tenantId: number; agentId: number }): Promise<void> {
  const agent = await findAgent(token.tenantId, token.agentId);
  const tokenHash = [agent?.tokenHash, agent?.previousTokenHash].find(
    (hash) => hash !== undefined && stored.token.key({ tokenHash: hash }).pk === token.pk,
  );
  if (tokenHash === undefined) return;
  await transaction<'tenant' | 'agent' | 'token'>()
    .add('tenant', tenantStaysLive(token.tenantId))
    .add('agent', {
      ConditionCheck: {
        TableName: tableName(),
        Key: stored.agent.key(token),
        ConditionExpression: 'tokenHash = :tokenHash OR previousTokenHash = :tokenHash',
        ExpressionAttributeValues: { ':tokenHash': tokenHash },
      },
    })
    .add('token', {
      Update: {
        TableName: tableName(),
        Key: stored.token.key({ tokenHash }),
        UpdateExpression: 'SET revokedWithTenant = :true',
        ConditionExpression: 'attribute_exists(pk)',
        ExpressionAttributeValues: { ':true': true },
      },
    })
    .commit();
}

/** Records a heartbeat: the agent counts as online for the next two minutes. */
export async function recordHeartbeat(tenantId: number, agentId: number, at: string): Promise<void> {
  await db().send(
    new UpdateCommand({
      TableName: tableName(),
      Key: stored.agent.key({ tenantId, agentId }),
      UpdateExpression: 'SET lastSeenAt = :at',
      ConditionExpression: 'attribute_exists(pk)',
      ExpressionAttributeValues: { ':at': at },
    }),
  );
}
