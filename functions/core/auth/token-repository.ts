import { getItem, tableName } from '#functions/core/store/dynamo.ts';
import { keys } from '#functions/core/store/keys.ts';
import { hashToken } from './tokens.ts';

/** Who a token belongs to. */
export type TokenOwner =
  | { kind: 'client'; clientId: number }
  | { kind: 'tenant'; clientId: number; tenantId: number; tenantDeleted?: true }
  | { kind: 'agent'; clientId: number; tenantId: number; agentId: number };

/** How long a deleted tenant's token still answers 404 `Tenant not found` (then it is unknown: 401). */
export const deletedTenantTokenDays = 90;

/**
 * The item that makes a token valid, by the token's SHA-256: deleting it revokes the token at once.
 * A deleted tenant's token stays, marked, so that the tenant's routes can say the tenant is gone.
 */
export async function findTokenOwner(tokenHash: string): Promise<TokenOwner | undefined> {
  return getItem<TokenOwner>(keys.token(tokenHash));
}

/**
 * Whether an agent's tenant is still there. The deletion revokes its agents' tokens in its own
 * transaction (agent-repository.ts `agentRevocationItems`); this is the second line, read on every
 * agent request, so that a token that outlived its tenant all the same opens nothing.
 */
export async function agentTenantLive(tenantId: number): Promise<boolean> {
  const tenant = await getItem<{ deletedAt?: string }>(keys.tenant(tenantId));
  return tenant !== undefined && tenant.deletedAt === undefined;
}

/** For a caller's transaction: makes a new token valid (and fails if it is already in use). */
export function newTokenWrite(token: string, owner: TokenOwner) {
  return {
    Put: {
      TableName: tableName(),
      Item: { ...keys.token(hashToken(token)), ...owner, createdAt: new Date().toISOString() },
      ConditionExpression: 'attribute_not_exists(pk)',
    },
  };
}

/**
 * For the deleting transaction: the tenant token of this hash reads nothing any more, and says why
 * (404 `Tenant not found`) until it expires.
 */
export function tenantDeletedTokenWrite(tokenHash: string, deletedAt: string) {
  return {
    Update: {
      TableName: tableName(),
      Key: keys.token(tokenHash),
      UpdateExpression: 'SET tenantDeleted = :true, expiresAt = :expiresAt',
      ExpressionAttributeValues: {
        ':true': true,
        ':expiresAt': Math.floor(Date.parse(deletedAt) / 1000) + deletedTenantTokenDays * 86_400,
      },
    },
  };
}

/** For a caller's transaction: revokes the token of this hash. */
export function revokeTokenWrite(tokenHash: string) {
  return { Delete: { TableName: tableName(), Key: keys.token(tokenHash) } };
}
