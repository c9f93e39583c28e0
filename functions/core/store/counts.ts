import { PutCommand } from '@aws-sdk/lib-dynamodb';
import { db, getItem, tableName, type TransactItem, writeIf } from './dynamo.ts';
import { countItem, type RequestRecord, type Transaction, transaction, type TransactionOutcome } from './transaction.ts';

/**
 * Counts that bound what a tenant or a client may create (quotas): one item each, `{ pk, sk, value }`,
 * changed in the same transaction as what it counts and conditioned there, never read and then
 * written, so that no number of concurrent writes takes a count past its maximum. A count that does
 * not exist counts nothing: every tenant and client that has items has its counts (migration 5,
 * migrations/counts-kept.ts, started those that earlier versions left to the first write needing them).
 */
export interface CountKey {
  pk: string;
  sk: string;
}

/** What a counted write did: written, refused by one of its own items' conditions (by their names), or at the count's maximum. */
export type Counted<Name extends string> = TransactionOutcome<Name> | { written: false; limit: true };

/**
 * Adds `delta` to a count: a growth only while it stays within `max` (the first starts an absent
 * count), a decrease only of a count that exists (what it takes off was counted).
 */
const countChange = (key: CountKey, delta: number, max: number): TransactItem => ({
  Update: {
    TableName: tableName(),
    Key: key,
    UpdateExpression: 'ADD #value :delta',
    ConditionExpression: delta > 0 ? 'attribute_not_exists(#value) OR #value <= :room' : 'attribute_exists(#value)',
    ExpressionAttributeNames: { '#value': 'value' },
    ExpressionAttributeValues: delta > 0 ? { ':delta': delta, ':room': max - delta } : { ':delta': delta },
  },
});

/** A count's value (0 when it does not exist: nothing counted yet). */
export async function readCount(key: CountKey): Promise<number> {
  return (await getItem<{ value: number }>(key))?.value ?? 0;
}

/**
 * Starts a count at `value`, what the caller counted of its items, unless the count exists: `false`
 * when it does. Every write of what a count counts goes through the count (and the release before
 * this one starts an absent count itself, the same way), so no item comes or goes between the
 * caller's reading and this write without this write failing.
 */
export function startCount(key: CountKey, value: number): Promise<boolean> {
  return writeIf(() =>
    db().send(
      new PutCommand({ TableName: tableName(), Item: { ...key, value }, ConditionExpression: 'attribute_not_exists(pk)' }),
    ),
  );
}

/**
 * Commits `tx` with a change of `delta` to a count, in one transaction: a growth beyond `max` is
 * refused by the count's own condition, whatever runs at the same time (`limit`). The count's item
 * is named `count` (reserved: no item of `tx` has it), so `failed` names only the items of `tx`
 * whose condition failed.
 */
export async function countedTransaction<Name extends string>(
  key: CountKey,
  count: { delta: number; max: number },
  tx: Transaction<Name>,
): Promise<Counted<Exclude<Name, RequestRecord>>> {
  const { delta, max } = count;
  if (delta > max) return { written: false, limit: true };
  const outcome = await transaction<Name | typeof countItem>()
    .include(tx.items)
    .include([{ name: countItem, item: countChange(key, delta, max) }])
    .commit();
  if (outcome.written) return outcome;
  const failed = [...outcome.failed].filter((name): name is Exclude<Name, RequestRecord> => name !== countItem);
  if (failed.length > 0) return { written: false, failed: new Set(failed) };
  // Only the count's condition failed: a growth past its maximum, or a decrease of what was never counted.
  if (delta > 0) return { written: false, limit: true };
  throw new Error(`The count ${key.pk} ${key.sk} does not exist: what this write takes off it was never counted`);
}
