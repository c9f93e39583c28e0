import { getItem, tableName, type TransactItem, transactOrReasons } from './dynamo.ts';

/**
 * Counts that bound what a tenant or a client may create (quotas): one item each, `{ pk, sk, value }`,
 * changed in the same transaction as what it counts and conditioned there, never read and then
 * written, so that no number of concurrent writes takes a count past its maximum.
 */
export interface CountKey {
  pk: string;
  sk: string;
}

/** A transaction's outcome: written, or the indexes of the items whose condition failed. */
type Outcome = Awaited<ReturnType<typeof transactOrReasons>>;

/** What a counted write did: written, refused by one of its own items' conditions, or at the count's maximum. */
export type Counted = Outcome | { written: false; limit: true };

/** Adds `delta` to a count that exists; a growth only while it stays within `max`. */
const countChange = (key: CountKey, delta: number, max: number): TransactItem => ({
  Update: {
    TableName: tableName(),
    Key: key,
    UpdateExpression: 'ADD #value :delta',
    ConditionExpression: delta > 0 ? '#value <= :room' : 'attribute_exists(#value)',
    ExpressionAttributeNames: { '#value': 'value' },
    ExpressionAttributeValues: delta > 0 ? { ':delta': delta, ':room': max - delta } : { ':delta': delta },
  },
});

/** A count written first: what was counted, if no other write started it meanwhile. */
const countStart = (key: CountKey, value: number): TransactItem => ({
  Put: { TableName: tableName(), Item: { ...key, value }, ConditionExpression: 'attribute_not_exists(pk)' },
});

/** A count's value (undefined before it is kept). */
export async function readCount(key: CountKey): Promise<number | undefined> {
  return (await getItem<{ value: number }>(key))?.value;
}

/**
 * Writes `items` with a change of `delta` to a count, in one transaction: a growth beyond `max` is
 * refused by the count's own condition, whatever runs at the same time (`limit`). Where the count
 * was not kept yet (data written before its quota), the first write that needs it counts the items
 * (`counted`, a consistent read) and starts it in its own transaction, conditional on no other
 * having started it meanwhile (every write of what it counts goes through the count, so none can
 * slip in between). `failedConditions` names the items of `items` whose condition failed.
 */
export async function countedTransaction(
  key: CountKey,
  count: { delta: number; max: number; counted: () => Promise<number> },
  items: readonly TransactItem[],
): Promise<Counted> {
  const { delta, max } = count;
  const mine = (outcome: Outcome): Counted | undefined => {
    if (outcome.written) return outcome;
    const failed = outcome.failedConditions.filter((index) => index < items.length);
    return failed.length > 0 ? { written: false, failedConditions: failed } : undefined;
  };
  for (let attempt = 0; attempt < 6; attempt++) {
    const outcome = mine(await transactOrReasons([...items, countChange(key, delta, max)]));
    if (outcome) return outcome;
    // The count's condition failed: at its maximum, or not started yet.
    const current = await readCount(key);
    if (current !== undefined) {
      if (delta > 0 && current + delta > max) return { written: false, limit: true };
      continue;
    }
    const existing = await count.counted();
    if (delta > 0 && existing + delta > max) return { written: false, limit: true };
    const started = mine(await transactOrReasons([...items, countStart(key, existing + delta)]));
    if (started) return started;
  }
  throw new Error(`The count ${key.pk} ${key.sk} kept changing`);
}
