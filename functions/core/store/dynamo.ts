import { DynamoDBClient, TransactionCanceledException } from '@aws-sdk/client-dynamodb';
import {
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

/** Next integer id of a counter, atomically (UpdateItem ADD). */
export async function nextId(counterName: string): Promise<number> {
  const result = await db().send(
    new UpdateCommand({
      TableName: tableName(),
      Key: keys.counter(counterName),
      UpdateExpression: 'ADD #value :one',
      ExpressionAttributeNames: { '#value': 'value' },
      ExpressionAttributeValues: { ':one': 1 },
      ReturnValues: 'UPDATED_NEW',
    }),
  );
  return Number(result.Attributes?.value);
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
 * One page of a partition of a global index. The cursor is the last evaluated key, base64url
 * encoded; a cursor that was not issued for this partition is a 400, never a DynamoDB error.
 */
export async function queryIndexPage<T>(options: {
  index: IndexName;
  partition: string;
  limit: number;
  cursor: string | undefined;
}): Promise<Page<T>> {
  const index = tableDefinition.globalIndexes.find((candidate) => candidate.indexName === options.index);
  if (!index) throw new Error(`Unknown index ${options.index}`);
  const input: QueryCommandInput = {
    TableName: tableName(),
    IndexName: index.indexName,
    KeyConditionExpression: '#pk = :pk',
    ExpressionAttributeNames: { '#pk': index.partitionKey },
    ExpressionAttributeValues: { ':pk': options.partition },
    Limit: Math.min(options.limit, maxPageSize),
  };
  if (options.cursor !== undefined) {
    input.ExclusiveStartKey = decodeCursor(options.cursor, [
      tableDefinition.partitionKey,
      tableDefinition.sortKey,
      index.partitionKey,
      index.sortKey,
    ]);
    if (input.ExclusiveStartKey[index.partitionKey] !== options.partition) throw invalidCursor();
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
