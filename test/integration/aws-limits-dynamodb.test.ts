/**
 * DynamoDB's item and transaction limits (dynamoItemBytes, dynamoTransactionItems,
 * dynamoTransactionBytes: functions/core/aws-limits.ts) on DynamoDB Local, the twin's table: each
 * is taken exactly at the limit and refused one over, through the service's own store module.
 *
 * What DynamoDB Local answers, each a 400 ValidationException:
 * - an item over 409,600 bytes (attribute names and values, UTF-8), put alone or in a transaction:
 *   "Item size has exceeded the maximum allowed size";
 * - a TransactWriteItems of more than 100 actions: "Member must have length less than or equal to
 *   100" (AWS's message puts "1 validation error detected: Value … at 'transactItems' failed to
 *   satisfy constraint: " before it);
 * - a TransactWriteItems whose items add up to more than 4 MiB: "Transaction payload size cannot
 *   exceed 4MB. Payload Size: N" (N counted up to the item that crosses the limit).
 *
 * Every item is under a partition of this file's own, deleted at the end.
 */
import { randomUUID } from 'node:crypto';
import { GetCommand, PutCommand } from '@aws-sdk/lib-dynamodb';
import { afterAll, describe, expect, test } from 'vitest';
import { auditScopeFor } from '#functions/core/audit/audit-record.ts';
import { auditItemsPerTransaction, withAuditScope } from '#functions/core/audit/audit-scope.ts';
import { dynamoItemBytes, dynamoTransactionBytes, dynamoTransactionItems } from '#functions/core/aws-limits.ts';
import { db, deleteAll, maxTransactItems, tableName, transact, type TransactItem } from '#functions/core/store/dynamo.ts';

const partition = `TEST#AWSLIMITS#${randomUUID()}`;
const written: { pk: string; sk: string }[] = [];

afterAll(async () => {
  await deleteAll(written);
});

type Item = Record<string, string>;

/** An item's size as DynamoDB counts it: each attribute's name and (string) value, in UTF-8 bytes. */
const itemBytes = (item: Item) =>
  Object.entries(item).reduce((sum, [name, value]) => sum + Buffer.byteLength(name) + Buffer.byteLength(value), 0);

/**
 * An item of this file's partition taking exactly `bytes`: its keys, and one attribute `name` whose
 * value is `char` repeated (topped up with ASCII).
 */
function itemOf(bytes: number, options: { name?: string; char?: string } = {}): Item {
  const { name = 'data', char = 'x' } = options;
  const sk = `item#${randomUUID()}`;
  const rest = bytes - itemBytes({ pk: partition, sk, [name]: '' });
  const charBytes = Buffer.byteLength(char);
  const item = { pk: partition, sk, [name]: char.repeat(Math.floor(rest / charBytes)) + 'x'.repeat(rest % charBytes) };
  expect(itemBytes(item)).toBe(bytes);
  written.push({ pk: partition, sk });
  return item;
}

const put = (item: Item): TransactItem => ({ Put: { TableName: tableName(), Item: item } });

const validation = (message: string | RegExp) => ({
  name: 'ValidationException',
  message: typeof message === 'string' ? message : expect.stringMatching(message),
  $metadata: { httpStatusCode: 400 },
});
const itemTooLarge = validation('Item size has exceeded the maximum allowed size');

async function stored(item: Item): Promise<boolean> {
  const result = await db().send(
    new GetCommand({ TableName: tableName(), Key: { pk: item.pk, sk: item.sk }, ConsistentRead: true }),
  );
  return result.Item !== undefined && itemBytes(result.Item as Item) === itemBytes(item);
}

describe('item size', () => {
  test.each([
    ['ASCII', {}],
    ['UTF-8 of two and three bytes a character, in the name and the value', { name: 'dadoção€', char: 'ã€' }],
  ])('an item of exactly dynamoItemBytes is stored, one byte more refused (%s)', async (_kind, options) => {
    const atLimit = itemOf(dynamoItemBytes, options);
    await db().send(new PutCommand({ TableName: tableName(), Item: atLimit }));
    expect(await stored(atLimit)).toBe(true);
    const over = itemOf(dynamoItemBytes + 1, options);
    await expect(db().send(new PutCommand({ TableName: tableName(), Item: over }))).rejects.toMatchObject(itemTooLarge);
    expect(await stored(over)).toBe(false);
  });

  test('in a transaction, an item one byte over refuses the whole transaction (DynamoDB Local: the same ValidationException)', async () => {
    const small = itemOf(100);
    await expect(transact([put(itemOf(dynamoItemBytes + 1)), put(small)])).rejects.toMatchObject(itemTooLarge);
    expect(await stored(small)).toBe(false);
  });
});

describe('transactions', () => {
  test('the bound the store splits writes on (maxTransactItems) is the limit, less the audit record its transaction may carry', () => {
    expect(maxTransactItems + auditItemsPerTransaction).toBe(dynamoTransactionItems);
  });

  test("a transaction of maxTransactItems items carrying an idempotent request's audit record (its 3 items) is written whole", async () => {
    const items = Array.from({ length: maxTransactItems }, () => itemOf(100));
    const tenantId = 900_000_000 + Math.floor(Math.random() * 1_000_000);
    const scope = auditScopeFor({
      chain: { owner: 'tenant', ownerId: tenantId, clientId: 1 },
      actor: { kind: 'operator', name: 'limits' },
      action: 'limits test',
      resource: { type: 'tenant' },
      fields: [],
      requestId: randomUUID(),
      requestKey: randomUUID().replaceAll('-', ''),
    });
    expect(await withAuditScope(scope, () => transact(items.map(put)))).toBe(true);
    expect(scope.pending).toBe(false);
    expect(await stored(items.at(-1) as Item)).toBe(true);
  });

  test('dynamoTransactionItems actions are written; one more is refused, nothing written', async () => {
    const items = Array.from({ length: dynamoTransactionItems + 1 }, () => itemOf(100));
    await expect(transact(items.map(put))).rejects.toMatchObject(
      validation(new RegExp(`Member must have length less than or equal to ${dynamoTransactionItems}$`)),
    );
    expect(await stored(items[0] as Item)).toBe(false);
    expect(await transact(items.slice(1).map(put))).toBe(true);
    expect(await stored(items[dynamoTransactionItems] as Item)).toBe(true);
  });

  test('items adding up to exactly dynamoTransactionBytes are written; one byte more is refused, nothing written', async () => {
    // As many items of the largest size as fit, and one that makes up the rest.
    const whole = Math.floor(dynamoTransactionBytes / dynamoItemBytes);
    const itemsOf = (total: number) => [
      ...Array.from({ length: whole }, () => itemOf(dynamoItemBytes)),
      itemOf(total - whole * dynamoItemBytes),
    ];
    const over = itemsOf(dynamoTransactionBytes + 1);
    await expect(transact(over.map(put))).rejects.toMatchObject(
      validation(`Transaction payload size cannot exceed 4MB. Payload Size: ${dynamoTransactionBytes + 1}`),
    );
    expect(await stored(over[0] as Item)).toBe(false);
    const atLimit = itemsOf(dynamoTransactionBytes);
    expect(await transact(atLimit.map(put))).toBe(true);
    expect(await Promise.all(atLimit.map(stored))).toEqual(atLimit.map(() => true));
  });
});
