import { DynamoDBClient, TransactionCanceledException } from '@aws-sdk/client-dynamodb';
import {
  BatchWriteCommand,
  type BatchWriteCommandInput,
  DynamoDBDocumentClient,
  QueryCommand,
  type QueryCommandInput,
  TransactWriteCommand,
  type TransactWriteCommandInput,
  UpdateCommand,
} from '@aws-sdk/lib-dynamodb';
import { config } from '../config.ts';
import { badRequest } from '../errors.ts';
import { keys } from './keys.ts';
import { type IndexName, tableDefinition } from './table-definition.ts';

let client: DynamoDBDocumentClient | undefined;

/** The document client, created once per cold start. */
export function db(): DynamoDBDocumentClient {
  client ??= DynamoDBDocumentClient.from(new DynamoDBClient({ endpoint: config().dynamodbEndpoint, maxAttempts: 5 }), {
    marshallOptions: { removeUndefinedValues: true },
  });
  return client;
}

export const tableName = () => config().tableName;

/** Next integer id of a global counter, atomically (UpdateItem ADD). */
export async function nextId(counterName: string): Promise<number> {
  const [id] = await allocateIds(keys.counter(counterName), 1);
  return id as number;
}

/** `count` consecutive ids from a counter item in one round trip. */
export async function allocateIds(counterKey: { pk: string; sk: string }, count: number): Promise<number[]> {
  if (count === 0) return [];
  const result = await db().send(
    new UpdateCommand({
      TableName: tableName(),
      Key: counterKey,
      UpdateExpression: 'ADD #value :count',
      ExpressionAttributeNames: { '#value': 'value' },
      ExpressionAttributeValues: { ':count': count },
      ReturnValues: 'UPDATED_NEW',
    }),
  );
  const last = Number(result.Attributes?.value);
  return Array.from({ length: count }, (_, index) => last - count + 1 + index);
}

/** Every item of a partition whose sort key starts with `prefix`, all pages. */
export async function queryAll<T>(partition: string, prefix: string, options: { projection?: string } = {}): Promise<T[]> {
  const items: T[] = [];
  let startKey: Record<string, unknown> | undefined;
  do {
    const page = await db().send(
      new QueryCommand({
        TableName: tableName(),
        KeyConditionExpression: 'pk = :pk AND begins_with(sk, :prefix)',
        ExpressionAttributeValues: { ':pk': partition, ':prefix': prefix },
        ProjectionExpression: options.projection,
        ExclusiveStartKey: startKey,
        ConsistentRead: true,
      }),
    );
    items.push(...((page.Items ?? []) as T[]));
    startKey = page.LastEvaluatedKey;
  } while (startKey);
  return items;
}

/** Puts many items, 25 per BatchWriteItem, retrying what DynamoDB leaves unprocessed. */
export async function putAll(items: readonly Record<string, unknown>[], parallelism = 4): Promise<void> {
  const chunks: Record<string, unknown>[][] = [];
  for (let start = 0; start < items.length; start += 25) chunks.push(items.slice(start, start + 25));
  let failure: unknown;
  const worker = async () => {
    for (let chunk = chunks.shift(); chunk && failure === undefined; chunk = chunks.shift()) {
      await writeChunk(chunk).catch((error: unknown) => {
        failure ??= error;
      });
    }
  };
  // Every worker stops at the first failure and the caller hears of it only once nothing is in flight.
  await Promise.all(Array.from({ length: Math.min(parallelism, chunks.length) }, worker));
  if (failure !== undefined) throw failure;
}

async function writeChunk(items: Record<string, unknown>[]): Promise<void> {
  let requests: NonNullable<BatchWriteCommandInput['RequestItems']>[string] = items.map((item) => ({
    PutRequest: { Item: item },
  }));
  for (let attempt = 0; requests.length > 0; attempt++) {
    if (attempt === 8) throw new Error(`DynamoDB left ${requests.length} writes unprocessed after ${attempt} attempts`);
    if (attempt > 0) await new Promise((resolve) => setTimeout(resolve, 50 * 2 ** attempt));
    const result = await db().send(new BatchWriteCommand({ RequestItems: { [tableName()]: requests } }));
    requests = result.UnprocessedItems?.[tableName()] ?? [];
  }
}

/**
 * Runs a transaction. Returns `false` when a condition check cancelled it (the caller decides what
 * that means: not found, conflict, retry), and rethrows anything else.
 */
export async function transact(items: NonNullable<TransactWriteCommandInput['TransactItems']>): Promise<boolean> {
  try {
    await db().send(new TransactWriteCommand({ TransactItems: items }));
    return true;
  } catch (error) {
    if (
      error instanceof TransactionCanceledException &&
      error.CancellationReasons?.some((reason) => reason.Code === 'ConditionalCheckFailed')
    ) {
      return false;
    }
    throw error;
  }
}

export interface Page<T> {
  items: T[];
  nextCursor: string | null;
}

const maxPageSize = 100;

/**
 * One page of a partition (of the table, or of a global index), optionally only the sort keys
 * starting with `prefix`. The cursor is the last evaluated key, base64url encoded; a cursor that
 * was not issued for this partition is a 400, never a DynamoDB error.
 */
export async function queryPage<T>(options: {
  index?: IndexName;
  partition: string;
  prefix?: string;
  limit: number;
  cursor: string | undefined;
  newestFirst?: boolean;
}): Promise<Page<T>> {
  const index = options.index && tableDefinition.globalIndexes.find((candidate) => candidate.indexName === options.index);
  if (options.index && !index) throw new Error(`Unknown index ${options.index}`);
  const partitionKey = index?.partitionKey ?? tableDefinition.partitionKey;
  const sortKey = index?.sortKey ?? tableDefinition.sortKey;
  const input: QueryCommandInput = {
    TableName: tableName(),
    IndexName: index?.indexName,
    KeyConditionExpression: options.prefix === undefined ? '#pk = :pk' : '#pk = :pk AND begins_with(#sk, :prefix)',
    ExpressionAttributeNames: options.prefix === undefined ? { '#pk': partitionKey } : { '#pk': partitionKey, '#sk': sortKey },
    ExpressionAttributeValues:
      options.prefix === undefined ? { ':pk': options.partition } : { ':pk': options.partition, ':prefix': options.prefix },
    Limit: Math.min(options.limit, maxPageSize),
    ScanIndexForward: !options.newestFirst,
  };
  if (options.cursor !== undefined) {
    const attributes = [
      tableDefinition.partitionKey,
      tableDefinition.sortKey,
      ...(index ? [index.partitionKey, index.sortKey] : []),
    ];
    input.ExclusiveStartKey = decodeCursor(options.cursor, attributes);
    const sortValue = input.ExclusiveStartKey[sortKey] ?? '';
    if (input.ExclusiveStartKey[partitionKey] !== options.partition || !sortValue.startsWith(options.prefix ?? ''))
      throw invalidCursor();
  }
  const result = await db().send(new QueryCommand(input));
  return {
    items: (result.Items ?? []) as T[],
    nextCursor: result.LastEvaluatedKey ? encodeCursor(result.LastEvaluatedKey) : null,
  };
}

const invalidCursor = () =>
  badRequest('Invalid cursor', [{ location: 'query', pointer: '/cursor', message: 'is not a cursor from this list' }]);

function encodeCursor(key: Record<string, unknown>): string {
  return Buffer.from(JSON.stringify(key)).toString('base64url');
}

function decodeCursor(cursor: string, attributes: readonly string[]): Record<string, string> {
  let decoded: unknown;
  try {
    decoded = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
  } catch {
    throw invalidCursor();
  }
  if (typeof decoded !== 'object' || decoded === null || Array.isArray(decoded)) throw invalidCursor();
  const entries = Object.entries(decoded);
  const valid =
    entries.length === attributes.length &&
    entries.every(([name, value]) => attributes.includes(name) && typeof value === 'string' && value.length < 512);
  if (!valid) throw invalidCursor();
  return Object.fromEntries(entries) as Record<string, string>;
}
