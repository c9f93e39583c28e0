import { UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { logger } from '#functions/core/observability/logger.ts';
import { db, tableName, writeIf } from '#functions/core/store/dynamo.ts';
import * as stored from '#functions/core/store/entity-declarations.ts';
import type { TokenOwner } from './token-repository.ts';
import { minuteBefore, stampExpressions } from './token-use.ts';

function ownerKey(owner: TokenOwner) {
  if (owner.kind === 'client') return stored.client.key(owner);
  if (owner.kind === 'tenant') return stored.tenant.key(owner);
  return stored.agent.key(owner);
}

/**
 * Records that the token of this hash was used now, on its item and on its owner, each only if its
 * last stamp is a minute old or more (two requests at once stamp once). Never throws: a stamp that
 * fails is logged (without the token or its hash) and the request it belongs to goes on. Neither
 * write makes an item: a token revoked meanwhile stays revoked, an owner deleted stays deleted.
 */
export async function stampTokenUse(tokenHash: string, owner: TokenOwner, nowMs = Date.now()): Promise<void> {
  const at = new Date(nowMs).toISOString();
  const update = (
    key: { pk: string; sk: string },
    expression: string,
    condition: string,
    values: Record<string, unknown>,
    names?: Record<string, string>,
  ) =>
    writeIf(() =>
      db().send(
        new UpdateCommand({
          TableName: tableName(),
          Key: key,
          UpdateExpression: expression,
          ConditionExpression: condition,
          ExpressionAttributeValues: values,
          ...(names ? { ExpressionAttributeNames: names } : {}),
        }),
      ),
    );
  const minuteAgo = minuteBefore(nowMs);
  const onToken = () =>
    update(
      stored.token.key({ tokenHash }),
      stampExpressions.token,
      'attribute_exists(pk) AND (attribute_not_exists(lastUsedAt) OR lastUsedAt < :minuteAgo)',
      { ':at': at, ':minuteAgo': minuteAgo },
    );
  const onOwner = async () => {
    const key = ownerKey(owner);
    const stamped = await update(
      key,
      stampExpressions.owner,
      'attribute_exists(tokensLastUsedAt) AND (attribute_not_exists(tokensLastUsedAt.#hash) OR tokensLastUsedAt.#hash < :minuteAgo)',
      { ':at': at, ':minuteAgo': minuteAgo },
      { '#hash': tokenHash },
    );
    if (!stamped) {
      await update(key, stampExpressions.firstOnOwner, 'attribute_exists(pk) AND attribute_not_exists(tokensLastUsedAt)', {
        ':first': { [tokenHash]: at },
      });
    }
  };
  try {
    // Only the request that won the token's stamp stamps the owner: a burst of a token's first uses (each
    // sees it unstamped) writes the owner item once, not once per request beside the transactions that
    // write that item too (a client's, a tenant's), each of which such a write would cancel as a conflict.
    if (await onToken()) await onOwner();
  } catch (error) {
    logger.warn('A token use was not recorded', { kind: owner.kind, error: error as Error });
  }
}
