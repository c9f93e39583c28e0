/**
 * The store's transaction builder (functions/core/store/transaction.ts) against DynamoDB Local:
 * failures come back as the names the caller gave its items, whatever their order, and the store's
 * own items (a quota's count, a request's record) keep their rules.
 */
import { TransactionCanceledException } from '@aws-sdk/client-dynamodb';
import { describe, expect, expectTypeOf, test } from 'vitest';
import { countedTransaction } from '#functions/core/store/counts.ts';
import { db, getItem, tableName, type TransactItem } from '#functions/core/store/dynamo.ts';
import * as stored from '#functions/core/store/entity-declarations.ts';
import { type AlongsideName, requestRecord, transaction, type TransactionOutcome } from '#functions/core/store/transaction.ts';

type Key = { pk: string; sk: string };

const freshKey = (): Key => ({ pk: `TXTEST#${crypto.randomUUID()}`, sk: 'ITEM' });

/** A put that needs its item not to exist yet. */
const create = (key: Key): TransactItem => ({
  Put: { TableName: tableName(), Item: { ...key, value: 1 }, ConditionExpression: 'attribute_not_exists(pk)' },
});

/** A check that needs its item to exist. */
const exists = (key: Key): TransactItem => ({
  ConditionCheck: { TableName: tableName(), Key: key, ConditionExpression: 'attribute_exists(pk)' },
});

/** An item that is there. */
async function existing(): Promise<Key> {
  const key = freshKey();
  expect((await transaction<'item'>().add('item', create(key)).commit()).written).toBe(true);
  return key;
}

describe('named transaction items', () => {
  test('a failure names every item whose condition failed, and only those; nothing is written', async () => {
    const [taken, missing, fresh] = [await existing(), freshKey(), freshKey()];
    const outcome = await transaction<'user' | 'group' | 'membership'>()
      .add('user', create(taken))
      .add('group', exists(missing))
      .add('membership', create(fresh))
      .commit();
    expect(outcome).toEqual({ written: false, failed: new Set(['user', 'group']) });
    expect(await getItem(fresh)).toBeUndefined();
  });

  test('items may share a name: it fails when any of them does, wherever they stand in the transaction', async () => {
    const [taken, free, other] = [await existing(), freshKey(), freshKey()];
    // A claim of two items, one of which fails, around another item: in either order, the same answer.
    const claimFirst = await transaction<'claim' | 'user'>()
      .add('claim', create(free), create(taken))
      .add('user', create(other))
      .commit();
    const claimAround = await transaction<'claim' | 'user'>()
      .add('claim', create(taken))
      .add('user', create(other))
      .add('claim', create(free))
      .commit();
    expect(claimFirst).toEqual({ written: false, failed: new Set(['claim']) });
    expect(claimAround).toEqual(claimFirst);
    const written = await transaction<'claim' | 'user'>()
      .add('claim', create(free), exists(taken))
      .add('user', create(other))
      .commit();
    expect(written).toEqual({ written: true });
    expect(await getItem(free)).toMatchObject({ value: 1 });
    expect(await getItem(other)).toMatchObject({ value: 1 });
  });

  test("a counted transaction adds its count under the reserved name `count`: the caller hears of its own items' failures, and `limit` for the count's", async () => {
    const count = freshKey();
    const counting = (delta: number, max: number) => ({ delta, max });
    // A count that does not exist counts nothing: a decrease of it is refused, the first growth starts it.
    await expect(
      countedTransaction(count, counting(-1, 2), transaction<'item'>().add('item', create(freshKey()))),
    ).rejects.toThrow(/does not exist/);
    expect(await countedTransaction(count, counting(1, 2), transaction<'item'>().add('item', create(freshKey())))).toEqual({
      written: true,
    });
    const taken = await existing();
    expect(await countedTransaction(count, counting(1, 2), transaction<'item'>().add('item', create(taken)))).toEqual({
      written: false,
      failed: new Set(['item']),
    });
    expect(await getItem(count)).toMatchObject({ value: 1 });
    expect(await countedTransaction(count, counting(1, 2), transaction<'item'>().add('item', create(freshKey())))).toEqual({
      written: true,
    });
    // At its maximum: the count's own condition fails, and that is no name of the caller's.
    const over = freshKey();
    expect(await countedTransaction(count, counting(1, 2), transaction<'item'>().add('item', create(over)))).toEqual({
      written: false,
      limit: true,
    });
    expect(await getItem(over)).toBeUndefined();
    expect(await getItem(count)).toMatchObject({ value: 2 });
  });

  test("a request's record that fails its condition is no caller's answer: another attempt took the request over (409)", async () => {
    const slot = stored.idempotency.key({ scope: 'transaction-test', keyHash: crypto.randomUUID() });
    const written = freshKey();
    const takenOver = {
      Update: {
        TableName: tableName(),
        Key: slot,
        UpdateExpression: 'SET progress = :progress',
        ConditionExpression: 'attribute_exists(pk)',
        ExpressionAttributeValues: { ':progress': 'x' },
      },
    };
    await expect(
      transaction<'item' | AlongsideName>()
        .add('item', create(written))
        .include([{ name: requestRecord, item: takenOver }])
        .commit(),
    ).rejects.toMatchObject({ status: 409, code: 'idempotency_key_in_progress' });
    expect(await getItem(written)).toBeUndefined();
  });

  test('names are typed: a misspelt name or the reserved `count` does not compile, and a request record is never in `failed`', () => {
    const tx = transaction<'user' | 'loginClaim' | 'count' | AlongsideName>();
    type Alongside = Exclude<AlongsideName, typeof requestRecord>;
    expectTypeOf(tx.add).parameter(0).toEqualTypeOf<'user' | 'loginClaim' | Alongside>();
    expectTypeOf(tx.commit).returns.resolves.toEqualTypeOf<TransactionOutcome<'user' | 'loginClaim' | 'count' | Alongside>>();
  });
});

describe('conflicts', () => {
  /**
   * DynamoDB cancels a transaction that meets another on the same item at the same moment
   * (TransactionConflict); DynamoDB Local runs one transaction at a time and never does. So the
   * client answers the transaction that holds `marker` with that cancellation, before it is sent,
   * `conflicts` times, as DynamoDB would.
   */
  async function withConflicts<T>(
    marker: string,
    conflicts: number,
    work: () => Promise<T>,
  ): Promise<{ result: T; attempts: number }> {
    let attempts = 0;
    const name = `conflicts-${marker}`;
    db().middlewareStack.add(
      ((next: (args: { input: object }) => Promise<unknown>, context: { commandName?: string }) =>
        async (args: { input: object }) => {
          if (context.commandName !== 'TransactWriteItemsCommand' || !JSON.stringify(args.input).includes(marker))
            return next(args);
          attempts += 1;
          if (attempts > conflicts) return next(args);
          throw new TransactionCanceledException({
            message: 'Transaction cancelled, please refer cancellation reasons for specific reasons [None, TransactionConflict]',
            $metadata: {},
            CancellationReasons: [{ Code: 'None' }, { Code: 'TransactionConflict' }],
          });
        }) as never,
      { step: 'initialize', name },
    );
    try {
      return { result: await work(), attempts };
    } finally {
      db().middlewareStack.remove(name);
    }
  }

  const twoItems = (first: Key, second: Key) =>
    transaction<'first' | 'second'>().add('first', create(first)).add('second', create(second)).commit();

  test('a transaction cancelled by a conflict is tried again, its conditions judged afresh, until it is written', async () => {
    const [first, second] = [freshKey(), freshKey()];
    const { result, attempts } = await withConflicts(first.pk, 3, () => twoItems(first, second));
    expect(result).toEqual({ written: true });
    expect(attempts).toBe(4);
    expect(await getItem(second)).toMatchObject({ value: 1 });
  });

  test('one that keeps conflicting is given up after 8 attempts, and the cancellation thrown', async () => {
    const [first, second] = [freshKey(), freshKey()];
    await expect(withConflicts(first.pk, 100, () => twoItems(first, second))).rejects.toBeInstanceOf(
      TransactionCanceledException,
    );
    expect(await getItem(first)).toBeUndefined();
  });
});
