import { getItem, tableName } from '#functions/core/store/dynamo.ts';
import { keys } from '#functions/core/store/keys.ts';
import { hashToken } from './tokens.ts';

/** Who a token belongs to. */
export type TokenOwner =
  | { kind: 'client'; clientId: number }
  | { kind: 'tenant'; clientId: number; tenantId: number }
  | { kind: 'agent'; clientId: number; tenantId: number; agentId: number };

/** The item that makes a token valid, by the token's SHA-256: deleting it revokes the token at once. */
export async function findTokenOwner(tokenHash: string): Promise<TokenOwner | undefined> {
  return getItem<TokenOwner>(keys.token(tokenHash));
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

/** For a caller's transaction: revokes the token of this hash. */
export function revokeTokenWrite(tokenHash: string) {
  return { Delete: { TableName: tableName(), Key: keys.token(tokenHash) } };
}
