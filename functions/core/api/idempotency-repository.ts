import { DeleteCommand, PutCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { db, getItem, tableName, writeIf } from '#functions/core/store/dynamo.ts';
import { type NamedItem, type RequestRecord, requestRecord } from '#functions/core/store/transaction.ts';
import * as stored from '#functions/core/store/entity-declarations.ts';

/** One Idempotency-Key of one caller on one route: the scope names both, the key is stored only as a hash. */
export interface IdempotencySlot {
  scope: string;
  keyHash: string;
}

const itemKey = ({ scope, keyHash }: IdempotencySlot) => stored.idempotency.key({ scope, keyHash });

/** Who holds a slot, and until when. */
export interface Claim {
  /** Hash of the request, so that the key reused with another request is refused. */
  fingerprint: string;
  /** Which attempt holds the claim: every write of the request's record is conditional on it. */
  claimId: string;
  /** Epoch milliseconds: the holder's deadline (its function's time-out), after which a retry may take over. */
  claimedUntil: number;
  /** Epoch seconds (the table's TTL). */
  expiresAt: number;
}

/**
 * One (caller, route, Idempotency-Key): claimed by an attempt in progress, with the encrypted
 * progress of its last checkpoint, then done with its encrypted answer.
 */
export type IdempotencyRecord =
  ({ state: 'in_progress'; progress?: string } & Claim) | ({ state: 'done'; response?: string } & Omit<Claim, 'claimedUntil'>);

const inProgress = { '#state': 'state' };

/**
 * Claims a slot that is free (or whose record has expired but not been swept by TTL yet) for a
 * first attempt; `false` when a record is there.
 */
export function claimFreshSlot(slot: IdempotencySlot, claim: Claim, nowMs: number): Promise<boolean> {
  return writeIf(() =>
    db().send(
      new PutCommand({
        TableName: tableName(),
        Item: { ...itemKey(slot), state: 'in_progress', ...claim },
        ConditionExpression: 'attribute_not_exists(pk) OR expiresAt < :nowSeconds',
        ExpressionAttributeValues: { ':nowSeconds': Math.floor(nowMs / 1000) },
      }),
    ),
  );
}

/**
 * Takes over the slot of an attempt of the same request that is past its deadline (it died or
 * timed out), keeping its progress; the record as taken over, or `undefined` when the slot is not
 * such a one.
 */
export async function takeOverSlot(
  slot: IdempotencySlot,
  claim: Pick<Claim, 'fingerprint' | 'claimId' | 'claimedUntil'>,
  nowMs: number,
): Promise<Extract<IdempotencyRecord, { state: 'in_progress' }> | undefined> {
  let taken: Record<string, unknown> | undefined;
  const won = await writeIf(async () => {
    const result = await db().send(
      new UpdateCommand({
        TableName: tableName(),
        Key: itemKey(slot),
        UpdateExpression: 'SET claimId = :claimId, claimedUntil = :claimedUntil',
        ConditionExpression:
          '#state = :inProgress AND claimedUntil < :now AND fingerprint = :fingerprint AND expiresAt >= :nowSeconds',
        ExpressionAttributeNames: inProgress,
        ExpressionAttributeValues: {
          ':claimId': claim.claimId,
          ':claimedUntil': claim.claimedUntil,
          ':inProgress': 'in_progress',
          ':now': nowMs,
          ':fingerprint': claim.fingerprint,
          ':nowSeconds': Math.floor(nowMs / 1000),
        },
        ReturnValues: 'ALL_NEW',
      }),
    );
    taken = result.Attributes;
  });
  return won ? (taken as unknown as Extract<IdempotencyRecord, { state: 'in_progress' }>) : undefined;
}

export async function findIdempotencyRecord(slot: IdempotencySlot): Promise<IdempotencyRecord | undefined> {
  return getItem<IdempotencyRecord>(itemKey(slot));
}

/** The condition every write of an attempt puts on its record: the attempt still holds it, in progress. */
const heldBy = (claimId: string) => ({
  ConditionExpression: 'claimId = :claimId AND #state = :inProgress',
  ExpressionAttributeNames: inProgress,
  values: { ':claimId': claimId, ':inProgress': 'in_progress' },
});

/** The update that closes the slot with the attempt's encrypted answer (absent when too large to keep). */
function completion(slot: IdempotencySlot, claimId: string, response: string | undefined) {
  const held = heldBy(claimId);
  return {
    TableName: tableName(),
    Key: itemKey(slot),
    UpdateExpression: `SET #state = :done${response === undefined ? '' : ', #response = :response'} REMOVE claimedUntil, progress`,
    ConditionExpression: held.ConditionExpression,
    ExpressionAttributeNames: {
      ...held.ExpressionAttributeNames,
      ...(response === undefined ? {} : { '#response': 'response' }),
    },
    ExpressionAttributeValues: { ...held.values, ':done': 'done', ...(response === undefined ? {} : { ':response': response }) },
  };
}

/** For the operation's last transaction: the slot closes with the answer in the same commit as the effect. */
export const completionItem = (
  slot: IdempotencySlot,
  claimId: string,
  response: string | undefined,
): NamedItem<RequestRecord> => ({ name: requestRecord, item: { Update: completion(slot, claimId, response) } });

/** For the transaction of a step: the slot records (encrypted) what a retry needs to resume after it. */
export function checkpointItem(slot: IdempotencySlot, claimId: string, progress: string): NamedItem<RequestRecord> {
  const held = heldBy(claimId);
  return {
    name: requestRecord,
    item: {
      Update: {
        TableName: tableName(),
        Key: itemKey(slot),
        UpdateExpression: 'SET progress = :progress',
        ConditionExpression: held.ConditionExpression,
        ExpressionAttributeNames: held.ExpressionAttributeNames,
        ExpressionAttributeValues: { ...held.values, ':progress': progress },
      },
    },
  };
}

/**
 * Closes the slot with the answer, unless the operation's own last transaction did already (or a
 * retry took the slot over): an operation that wrote nothing has no transaction to carry it.
 */
export async function completeSlot(slot: IdempotencySlot, claimId: string, response: string | undefined): Promise<void> {
  await writeIf(() => db().send(new UpdateCommand(completion(slot, claimId, response))));
}

/**
 * The attempt failed: a slot with no checkpoint is freed (a retry starts afresh, and the key may
 * be used for another request); one with a checkpoint stays, with its deadline lifted, so that a
 * retry resumes at once.
 */
export async function abandonSlot(slot: IdempotencySlot, claimId: string): Promise<void> {
  const held = heldBy(claimId);
  const freed = await writeIf(() =>
    db().send(
      new DeleteCommand({
        TableName: tableName(),
        Key: itemKey(slot),
        ConditionExpression: `${held.ConditionExpression} AND attribute_not_exists(progress)`,
        ExpressionAttributeNames: held.ExpressionAttributeNames,
        ExpressionAttributeValues: held.values,
      }),
    ),
  );
  if (freed) return;
  // Not ours any more (a retry took it over, or it is done) is left alone by the condition.
  await writeIf(() =>
    db().send(
      new UpdateCommand({
        TableName: tableName(),
        Key: itemKey(slot),
        UpdateExpression: 'SET claimedUntil = :zero',
        ConditionExpression: held.ConditionExpression,
        ExpressionAttributeNames: held.ExpressionAttributeNames,
        ExpressionAttributeValues: { ...held.values, ':zero': 0 },
      }),
    ),
  );
}
