/**
 * Maps keyed by Object.prototype's property names, written and read through the real DynamoDB
 * Local with the service's document client. Its marshaller picks a value's type by
 * `value.constructor.name`: `{"constructor": "x"}` (a development variable of that name) matched
 * no type and threw, a 500.
 */
import { GetCommand, PutCommand } from '@aws-sdk/lib-dynamodb';
import { describe, expect, test } from 'vitest';
import { db, tableName } from '#functions/core/store/dynamo.ts';

/** `__proto__` is left out: no body may carry it (request-body.ts), nor a variable name (create-tenant.schema.json). */
const prototypeNames = Object.getOwnPropertyNames(Object.prototype).filter((name) => name !== '__proto__');
const values: unknown[] = ['x', '', 0, -1.5, true, null, ['a', 2, null], { inner: 'y' }, []];

async function roundTrip(data: unknown): Promise<unknown> {
  const key = { pk: `TEST#marshalling#${crypto.randomUUID()}`, sk: 'ITEM' };
  await db().send(new PutCommand({ TableName: tableName(), Item: { ...key, data } }));
  const read = await db().send(new GetCommand({ TableName: tableName(), Key: key, ConsistentRead: true }));
  return read.Item?.data;
}

describe('maps with the names of object methods as keys', () => {
  test.each(prototypeNames)('%s, at the top and nested, with every kind of value, reads back as written', async (name) => {
    for (const value of values) {
      // Parsed, as a request body is: the key is an own property of a plain object.
      const data = JSON.parse(JSON.stringify({ [name]: value, nested: { [name]: value, list: [{ [name]: value }] } }));
      expect(await roundTrip(data), `${name}: ${JSON.stringify(value)}`).toEqual(data);
    }
  });

  test('a constructor holding an object still cannot be stored: why no request body may carry one (request-body.ts)', async () => {
    // The marshaller reads `constructor.name` as the value's type: this map is taken for a Set.
    await expect(roundTrip(JSON.parse('{"constructor":{"name":"Set"}}'))).rejects.toThrow();
  });

  test('all of them in one map', async () => {
    const data = JSON.parse(JSON.stringify(Object.fromEntries(prototypeNames.map((name, index) => [name, `v${index}`]))));
    expect(await roundTrip(data)).toEqual(data);
  });
});
