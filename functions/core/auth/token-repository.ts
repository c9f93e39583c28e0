import { getItem, tableName } from '#functions/core/store/dynamo.ts';
import * as stored from '#functions/core/store/entity-declarations.ts';
import { hashToken, parseSignedToken, type TokenSubject } from './tokens.ts';

/** Who a token belongs to. */
export type TokenOwner =
  | Extract<TokenSubject, { kind: 'client' }>
  | (Extract<TokenSubject, { kind: 'tenant' }> & { tenantDeleted?: true })
  | (Extract<TokenSubject, { kind: 'agent' }> & {
      /**
       * The tenant's deletion revokes this token in its own transaction: it was made (or marked by
       * migration 9) by a transaction that held its tenant live and unclaimed and its agent naming it
       * (agent-repository.ts `tenantStaysLive`, or the tenant's own creation), and the deletion
       * revokes every token its agents name.
       * So its item alone says the tenant is live, and no request reads the tenant (`agentTenantLive`)
       * for it. An agent token without it (one an earlier release made) is checked against its tenant.
       */
      revokedWithTenant?: true;
    });

/** The item that makes a token valid: its owner, and what may end it or says how it is used. */
export type TokenItem = TokenOwner & {
  /**
   * Epoch second at which the token stops working (the table's TTL attribute, which deletes the item
   * some time later): a previous token's when its grace period ends (token-rotation.ts), a deleted
   * tenant's after `deletedTenantTokenDays`. A current token has none.
   */
  expiresAt?: number;
  /** When a request last authenticated with it, to the minute (token-use.ts). */
  lastUsedAt?: string;
};

/** How long a deleted tenant's token still answers 404 `Tenant not found` (then it is unknown: 401). */
export const deletedTenantTokenDays = 90;

/**
 * The item that makes a token valid, by the token's SHA-256: deleting it revokes the token at once.
 * A deleted tenant's token stays, marked, so that the tenant's routes can say the tenant is gone.
 */
export async function findTokenOwner(tokenHash: string): Promise<TokenItem | undefined> {
  return getItem<TokenItem>(stored.token.key({ tokenHash }));
}

/**
 * Whether a token item is past its `expiresAt`: no token any more, exactly as a missing item is (TTL
 * deletes expired items only within a day or two, so the expiry is read, never left to TTL).
 */
export const tokenExpired = (item: Pick<TokenItem, 'expiresAt'>, nowMs = Date.now()): boolean =>
  item.expiresAt !== undefined && item.expiresAt <= Math.floor(nowMs / 1000);

/**
 * Whether an agent's tenant is still there, for an agent token whose item does not say so
 * (`revokedWithTenant`): one an earlier release made, which migration 9 could not mark, or one
 * written otherwise. The deletion revokes its agents' tokens in its own transaction
 * (agent-repository.ts `agentRevocationItems`); this read makes such a token that outlived its
 * tenant all the same open nothing.
 */
export async function agentTenantLive(tenantId: number): Promise<boolean> {
  const tenant = await getItem<{ deletedAt?: string }>(stored.tenant.key({ tenantId }));
  return tenant !== undefined && tenant.deletedAt === undefined;
}

/**
 * For a caller's transaction: makes a new token valid (and fails if it is already in use). A signed
 * token's item records its key id (`keyId`) (what `listUnsignedTokens` tells apart); one signed
 * for another owner than `owner` is a bug, refused here rather than stored as a token that no
 * request could use.
 */
export function newTokenWrite(token: string, owner: TokenOwner) {
  const signed = parseSignedToken(token);
  if (signed && JSON.stringify(signed.subject) !== JSON.stringify(ownerIds(owner))) {
    throw new Error(`A token signed for ${JSON.stringify(signed.subject)} cannot be given to ${JSON.stringify(ownerIds(owner))}`);
  }
  return {
    Put: {
      TableName: tableName(),
      Item: {
        ...stored.token.key({ tokenHash: hashToken(token) }),
        ...owner,
        // The key that signed it (what `tokens unsigned` tells apart: an unsigned token has none).
        ...(signed ? { keyId: Number(signed.keyId) } : {}),
        createdAt: new Date().toISOString(),
      },
      ConditionExpression: 'attribute_not_exists(pk)',
    },
  };
}

/** The kind and ids of an owner, in the order a token subject has them. */
function ownerIds(owner: TokenOwner): TokenSubject {
  if (owner.kind === 'client') return { kind: 'client', clientId: owner.clientId };
  if (owner.kind === 'tenant') return { kind: 'tenant', clientId: owner.clientId, tenantId: owner.tenantId };
  return { kind: 'agent', clientId: owner.clientId, tenantId: owner.tenantId, agentId: owner.agentId };
}

/**
 * For the deleting transaction: the tenant token of this hash reads nothing any more, and says why
 * (404 `Tenant not found`) until it expires.
 */
export function tenantDeletedTokenWrite(tokenHash: string, deletedAt: string) {
  return {
    Update: {
      TableName: tableName(),
      Key: stored.token.key({ tokenHash }),
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
  return { Delete: { TableName: tableName(), Key: stored.token.key({ tokenHash }) } };
}

/**
 * For a rotation's transaction: the token of this hash, the owner's current one until now, keeps
 * working until `expiresAt` (epoch seconds), then stops and TTL removes it. Conditional on its item
 * being there and still current (no expiry yet): a rotation never makes an item of a token it cannot see.
 */
export function keepTokenUntilWrite(tokenHash: string, expiresAt: number) {
  return {
    Update: {
      TableName: tableName(),
      Key: stored.token.key({ tokenHash }),
      UpdateExpression: 'SET expiresAt = :expiresAt',
      ConditionExpression: 'attribute_exists(pk) AND attribute_not_exists(expiresAt)',
      ExpressionAttributeValues: { ':expiresAt': expiresAt },
    },
  };
}
