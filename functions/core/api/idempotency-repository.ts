import { DeleteCommand, PutCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { db, getItem, tableName, writeIf } from '#functions/core/store/dynamo.ts';
import { keys } from '#functions/core/store/keys.ts';

/** One Idempotency-Key of one caller on one route: the scope names both, the key is stored only as a hash. */
export interface IdempotencySlot {
  scope: string;
  keyHash: string;
}

const itemKey = ({ scope, keyHash }: IdempotencySlot) => keys.idempotency(scope, keyHash);

interface Claim {
  /** Hash of the request, so that the key reused with another request is refused. */
  fingerprint: string;
  /** Which request holds the claim. */
  claimId: string;
  /** Epoch milliseconds. */
  claimedUntil: number;
  /** Epoch seconds (the table's TTL). */
  expiresAt: number;
}

/** One (caller, route, Idempotency-Key): claimed by a request in progress, then done with its encrypted answer. */
export type IdempotencyRecord =
  ({ state: 'in_progress' } & Claim) | ({ state: 'done'; response: string } & Omit<Claim, 'claimedUntil'>);

/**
 * Claims the key for a request, in one conditional write; `false` when another request holds it
 * or finished it. `now` is the epoch milliseconds the claim was made at.
 */
export function insertClaim(slot: IdempotencySlot, claim: Claim, now: number): Promise<boolean> {
  return writeIf(() =>
    db().send(
      new PutCommand({
        TableName: tableName(),
        Item: { ...itemKey(slot), state: 'in_progress', ...claim },
        // Free, or held by a request that died, or expired but not yet swept by TTL.
        ConditionExpression:
          'attribute_not_exists(pk) OR (#state = :inProgress AND claimedUntil < :now) OR expiresAt < :nowSeconds',
        ExpressionAttributeNames: { '#state': 'state' },
        ExpressionAttributeValues: { ':inProgress': 'in_progress', ':now': now, ':nowSeconds': Math.floor(now / 1000) },
      }),
    ),
  );
}

export async function findIdempotencyRecord(slot: IdempotencySlot): Promise<IdempotencyRecord | undefined> {
  return getItem<IdempotencyRecord>(itemKey(slot));
}

/** Stores the answer of the request holding claim `claimId`, and closes the claim. */
export async function completeClaim(slot: IdempotencySlot, claimId: string, response: string): Promise<void> {
  await db().send(
    new UpdateCommand({
      TableName: tableName(),
      Key: itemKey(slot),
      UpdateExpression: 'SET #state = :done, #response = :response REMOVE claimedUntil',
      ConditionExpression: 'claimId = :claimId',
      ExpressionAttributeNames: { '#state': 'state', '#response': 'response' },
      ExpressionAttributeValues: { ':done': 'done', ':response': response, ':claimId': claimId },
    }),
  );
}

/** Frees the key if claim `claimId` still holds it. */
export async function releaseClaim(slot: IdempotencySlot, claimId: string): Promise<void> {
  // A claim that is no longer this one (expired and taken over) is not ours to release.
  await writeIf(() =>
    db().send(
      new DeleteCommand({
        TableName: tableName(),
        Key: itemKey(slot),
        ConditionExpression: 'claimId = :claimId',
        ExpressionAttributeValues: { ':claimId': claimId },
      }),
    ),
  );
}
