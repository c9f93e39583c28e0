/**
 * The operators' scan for `npm run admin -- tokens unsigned` (bin/admin.ts): the one Scan of the
 * project, kept out of functions/, which never scan the table (test/infra/iam-actions.test.ts).
 */
import { ScanCommand } from '@aws-sdk/lib-dynamodb';
import type { TokenItem, TokenOwner } from '#functions/core/auth/token-repository.ts';
import { db, tableName } from '#functions/core/store/dynamo.ts';
import * as stored from '#functions/core/store/entity-declarations.ts';

/** A token item issued before tokens were signed, as `listUnsignedTokens` lists it (`expiresAt`: a previous token's end). */
export type UnsignedToken = TokenOwner & Pick<TokenItem, 'expiresAt'> & { createdAt?: string };

/**
 * Every live token that is not signed (made before tokens were signed, or chosen by an operator):
 * those whose owners must rotate before UNSIGNED_TOKENS=refuse. A scan of the whole table, for the
 * operators' CLI, never a request; deleted tenants' marked tokens are left out (they open nothing),
 * and so are previous tokens whose grace period is over (TTL removes them later). A previous token
 * still in its grace period is listed with its `expiresAt`: it works until then, or until its owner
 * ends it.
 */
export async function listUnsignedTokens(nowMs = Date.now()): Promise<UnsignedToken[]> {
  const found: UnsignedToken[] = [];
  let startKey: Record<string, unknown> | undefined;
  do {
    const page = await db().send(
      new ScanCommand({
        TableName: tableName(),
        FilterExpression:
          'begins_with(pk, :prefix) AND sk = :sk AND attribute_not_exists(#keyId) AND attribute_not_exists(#tenantDeleted) ' +
          'AND (attribute_not_exists(#expiresAt) OR #expiresAt > :now)',
        ProjectionExpression: '#kind, #clientId, #tenantId, #agentId, #createdAt, #expiresAt',
        ExpressionAttributeNames: Object.fromEntries(
          ['keyId', 'tenantDeleted', 'kind', 'clientId', 'tenantId', 'agentId', 'createdAt', 'expiresAt'].map((name) => [
            `#${name}`,
            name,
          ]),
        ),
        ExpressionAttributeValues: {
          ':prefix': stored.token.partitionPrefix({}),
          ':sk': stored.token.key({ tokenHash: '' }).sk,
          ':now': Math.floor(nowMs / 1000),
        },
        ExclusiveStartKey: startKey,
      }),
    );
    found.push(...((page.Items ?? []) as UnsignedToken[]));
    startKey = page.LastEvaluatedKey;
  } while (startKey);
  return found;
}
