import { getItem, tableName, type TransactItem } from './dynamo.ts';
import { countItem, type RequestRecord, type Transaction, transaction, type TransactionOutcome } from './transaction.ts';

/**
 * Counts that bound what a tenant or a client may create (quotas): one item each, `{ pk, sk, value }`,
 * changed in the same transaction as what it counts and conditioned there, never read and then
 * written, so that no number of concurrent writes takes a count past its maximum.
 */
export interface CountKey {
  pk: string;
  sk: string;
}

/** What a counted write did: written, refused by one of its own items' conditions (by their names), or at the count's maximum. */
export type Counted<Name extends string> = TransactionOutcome<Name> | { written: false; limit: true };

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
 * Commits `tx` with a change of `delta` to a count, in one transaction: a growth beyond `max` is
 * refused by the count's own condition, whatever runs at the same time (`limit`). Where the count
 * was not kept yet (data written before its quota), the first write that needs it counts the items
 * (`counted`, a consistent read) and starts it in its own transaction, conditional on no other
 * having started it meanwhile (every write of what it counts goes through the count, so none can
 * slip in between). The count's item is named `count` (reserved: no item of `tx` has it), so
 * `failed` names only the items of `tx` whose condition failed.
 */
export async function countedTransaction<Name extends string>(
  key: CountKey,
  count: { delta: number; max: number; counted: () => Promise<number> },
  tx: Transaction<Name>,
): Promise<Counted<Exclude<Name, RequestRecord>>> {
  const { delta, max } = count;
  /** `tx` with the count's item; undefined when only the count's condition failed. */
  const withCount = async (countWrite: TransactItem): Promise<Counted<Exclude<Name, RequestRecord>> | undefined> => {
    const outcome = await transaction<Name | typeof countItem>()
      .include(tx.items)
      .include([{ name: countItem, item: countWrite }])
      .commit();
    if (outcome.written) return outcome;
    const failed = [...outcome.failed].filter((name): name is Exclude<Name, RequestRecord> => name !== countItem);
    return failed.length > 0 ? { written: false, failed: new Set(failed) } : undefined;
  };
  for (let attempt = 0; attempt < 6; attempt++) {
    const outcome = await withCount(countChange(key, delta, max));
    if (outcome) return outcome;
    // The count's condition failed: at its maximum, or not started yet.
    const current = await readCount(key);
    if (current !== undefined) {
      if (delta > 0 && current + delta > max) return { written: false, limit: true };
      continue;
    }
    const existing = await count.counted();
    if (delta > 0 && existing + delta > max) return { written: false, limit: true };
    const started = await withCount(countStart(key, existing + delta));
    if (started) return started;
  }
  throw new Error(`The count ${key.pk} ${key.sk} kept changing`);
}
