import { ConditionalCheckFailedException, DynamoDBClient, TransactionCanceledException } from '@aws-sdk/client-dynamodb';
import {
  BatchGetCommand,
  BatchWriteCommand,
  type BatchWriteCommandInput,
  DeleteCommand,
  DynamoDBDocumentClient,
  GetCommand,
  PutCommand,
  QueryCommand,
  type QueryCommandInput,
  TransactWriteCommand,
  type TransactWriteCommandInput,
  UpdateCommand,
} from '@aws-sdk/lib-dynamodb';
import { auditItemsPerTransaction, currentAudit, pendingAudit, writableBeforeRecord } from '#functions/core/audit/audit-scope.ts';
import { dynamoTransactionItems } from '#functions/core/aws-limits.ts';
import { config } from '#functions/core/config.ts';
import { badRequest, supersededAttempt } from '#functions/core/errors.ts';
import * as stored from './entity-declarations.ts';
import { type IndexName, tableDefinition } from './table-definition.ts';

let client: DynamoDBDocumentClient | undefined;

/** The document client, created once per cold start. */
export function db(): DynamoDBDocumentClient {
  if (client) return client;
  client = DynamoDBDocumentClient.from(new DynamoDBClient({ endpoint: config().dynamodbEndpoint, maxAttempts: 5 }), {
    marshallOptions: {
      removeUndefinedValues: true,
      // The marshaller picks a value's type by its `constructor.name`: a map sent with an own
      // `constructor` key (`{"constructor": "x"}`) matched no type and threw (a 500); as a class
      // instance it is stored as the map it is. (`constructor` holding an object is refused with
      // the body: request-body.ts.)
      convertClassInstanceToMap: true,
    },
  });
  client.middlewareStack.add(
    (next, context) => async (args) => {
      if (pendingAudit()) refuseChangeBeforeRecord(context.commandName ?? '', args.input as WriteInput);
      return next(args);
    },
    { step: 'initialize', name: 'changeNeverBeforeItsAuditRecord' },
  );
  return client;
}

type KeyOf = { pk?: unknown; sk?: unknown };
type WriteInput = {
  Item?: KeyOf;
  Key?: KeyOf;
  TransactItems?: { Put?: { Item: KeyOf }; Update?: { Key: KeyOf }; Delete?: { Key: KeyOf }; ConditionCheck?: unknown }[];
  RequestItems?: Record<string, { PutRequest?: { Item: KeyOf }; DeleteRequest?: { Key: KeyOf } }[]>;
};

/**
 * While a request owes its audit record (audit/audit-scope.ts), a write that is a change must carry
 * it, and only `transactOrReasons` adds it: a write of a change sent any other way (a single write,
 * a batch) before the record is a bug, refused before it reaches the table, so no change is ever
 * stored without its record. Counters and the request's own bookkeeping may precede it.
 */
function refuseChangeBeforeRecord(command: string, input: WriteInput): void {
  const keys: KeyOf[] =
    command === 'PutItemCommand'
      ? [input.Item ?? {}]
      : command === 'UpdateItemCommand' || command === 'DeleteItemCommand'
        ? [input.Key ?? {}]
        : command === 'BatchWriteItemCommand'
          ? Object.values(input.RequestItems ?? {}).flatMap((requests) =>
              requests.map((request) => request.PutRequest?.Item ?? request.DeleteRequest?.Key ?? {}),
            )
          : command === 'TransactWriteItemsCommand'
            ? (input.TransactItems ?? []).flatMap((item) =>
                item.ConditionCheck ? [] : [item.Put?.Item ?? item.Update?.Key ?? item.Delete?.Key ?? {}],
              )
            : [];
  // The record itself comes in a transaction (audit-record.ts): whatever else that holds is the change it records.
  if (keys.some((key) => String(key.pk).startsWith(stored.auditRecord.partitionPrefix({})))) return;
  const change = keys.find((key) => !writableBeforeRecord(key));
  if (change)
    throw new Error(`${command} of ${String(change.pk)} ${String(change.sk)} would store a change before its audit record`);
}

export const tableName = () => config().tableName;

/** Next integer id of a global counter, atomically (UpdateItem ADD). */
export async function nextId(counterName: string): Promise<number> {
  const [id] = await allocateIds(stored.idCounter.key({ name: counterName }), 1);
  currentAudit()?.noteAllocated(counterName, id as number);
  return id as number;
}

/** Next integer id of one of a tenant's counters (agents, alerts, users, …), atomically. */
export async function nextTenantId(tenantId: number, counterName: string): Promise<number> {
  const [id] = await allocateIds(stored.tenantIdCounter.key({ tenantId, name: counterName }), 1);
  currentAudit()?.noteAllocated(counterName, id as number);
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

/**
 * Which sort keys of a partition a query reads: those starting with a prefix ('' for all), those
 * between two keys (both included), or those before a key.
 */
type SortKeys = { prefix: string | undefined } | { between: readonly [string, string] } | { below: string };

/** The key condition of a query: one partition, and optionally some of its sort keys. */
function keyCondition(
  keyNames: { partition: string; sort: string },
  partition: string,
  sortKeys: SortKeys,
): {
  KeyConditionExpression: string;
  ExpressionAttributeNames: Record<string, string>;
  ExpressionAttributeValues: Record<string, string>;
} {
  const names = { '#pk': keyNames.partition, '#sk': keyNames.sort };
  if ('between' in sortKeys) {
    const [from, to] = sortKeys.between;
    return {
      KeyConditionExpression: '#pk = :pk AND #sk BETWEEN :from AND :to',
      ExpressionAttributeNames: names,
      ExpressionAttributeValues: { ':pk': partition, ':from': from, ':to': to },
    };
  }
  if ('below' in sortKeys) {
    return {
      KeyConditionExpression: '#pk = :pk AND #sk < :below',
      ExpressionAttributeNames: names,
      ExpressionAttributeValues: { ':pk': partition, ':below': sortKeys.below },
    };
  }
  const { prefix } = sortKeys;
  const withPrefix = prefix !== undefined && prefix !== '';
  return {
    KeyConditionExpression: withPrefix ? '#pk = :pk AND begins_with(#sk, :prefix)' : '#pk = :pk',
    ExpressionAttributeNames: withPrefix ? names : { '#pk': keyNames.partition },
    ExpressionAttributeValues: withPrefix ? { ':pk': partition, ':prefix': prefix } : { ':pk': partition },
  };
}

/** The key attribute names of the table, or of one of its global indexes. */
function keyNamesOf(indexName: IndexName | undefined) {
  const index = indexName && tableDefinition.globalIndexes.find((candidate) => candidate.indexName === indexName);
  if (indexName && !index) throw new Error(`Unknown index ${indexName}`);
  return index
    ? { indexName: index.indexName, partition: index.partitionKey, sort: index.sortKey }
    : { indexName: undefined, partition: tableDefinition.partitionKey, sort: tableDefinition.sortKey };
}

/**
 * Every item of a partition (of the table, or of a global index) whose sort key starts with
 * `prefix` ('' for all); all pages. Reads of the table are consistent; index reads cannot be.
 */
export function queryAll<T>(
  partition: string,
  prefix: string,
  options: { projection?: string; index?: IndexName } = {},
): Promise<T[]> {
  return queryPages<T>(partition, { prefix }, options);
}

/** Every item of a partition whose sort key is from `from` to `to` (both included), as queryAll reads them. */
export function queryBetween<T>(
  partition: string,
  from: string,
  to: string,
  options: { projection?: string; index?: IndexName } = {},
): Promise<T[]> {
  return queryPages<T>(partition, { between: [from, to] }, options);
}

/** Reads every page of a query (each page asks from where the last ended, so they come one after another). */
async function queryPages<T>(
  partition: string,
  sortKeys: SortKeys,
  options: { projection?: string; index?: IndexName; startKey?: Record<string, unknown> },
): Promise<T[]> {
  const names = keyNamesOf(options.index);
  const items: T[] = [];
  let startKey = options.startKey;
  do {
    const page = await db().send(
      new QueryCommand({
        TableName: tableName(),
        IndexName: names.indexName,
        ...keyCondition(names, partition, sortKeys),
        ProjectionExpression: options.projection,
        ExclusiveStartKey: startKey,
        ConsistentRead: names.indexName ? undefined : true,
      }),
    );
    items.push(...((page.Items ?? []) as T[]));
    startKey = page.LastEvaluatedKey;
  } while (startKey);
  return items;
}

/** One item by key, read strongly consistent (what was just written is there); undefined when missing. */
export async function getItem<T = Record<string, unknown>>(itemKey: { pk: string; sk: string }): Promise<T | undefined> {
  const result = await db().send(new GetCommand({ TableName: tableName(), Key: itemKey, ConsistentRead: true }));
  return result.Item as T | undefined;
}

/**
 * Many items by key, 100 per BatchGetItem, retrying what DynamoDB leaves unprocessed; missing ones
 * are left out. A key asked for twice is read once (BatchGetItem refuses duplicate keys).
 */
export async function getAll<T>(itemKeys: readonly { pk: string; sk: string }[]): Promise<T[]> {
  const unique = [...new Map(itemKeys.map(({ pk, sk }) => [`${pk}\u0000${sk}`, { pk, sk }])).values()];
  const items: T[] = [];
  for (let start = 0; start < unique.length; start += 100) {
    let pending: Record<string, unknown>[] = unique.slice(start, start + 100);
    for (let attempt = 0; pending.length > 0; attempt++) {
      if (attempt === 8) throw new Error(`DynamoDB left ${pending.length} reads unprocessed after ${attempt} attempts`);
      if (attempt > 0) await new Promise((resolve) => setTimeout(resolve, 50 * 2 ** attempt));
      const result = await db().send(
        new BatchGetCommand({ RequestItems: { [tableName()]: { Keys: pending, ConsistentRead: true } } }),
      );
      items.push(...((result.Responses?.[tableName()] ?? []) as T[]));
      pending = (result.UnprocessedKeys?.[tableName()]?.Keys ?? []) as Record<string, unknown>[];
    }
  }
  return items;
}

type WriteRequest = NonNullable<BatchWriteCommandInput['RequestItems']>[string][number];

/** Puts many items, 25 per BatchWriteItem, retrying what DynamoDB leaves unprocessed. */
export function putAll(items: readonly Record<string, unknown>[]): Promise<void> {
  return writeAll(items.map((item) => ({ PutRequest: { Item: item } })));
}

/** The most items a caller's transaction may hold: what one TransactWriteItems takes, less the audit record's items. */
export const maxTransactItems = dynamoTransactionItems - auditItemsPerTransaction;

/**
 * Puts and deletes items in one transaction when they fit in one, so that readers see all of it or
 * none; a larger set goes in batches (the puts, then the deletes), which a retry of the same request
 * converges, since every put and delete is the same again.
 */
export async function replaceItems(
  puts: readonly Record<string, unknown>[],
  deletes: readonly { pk: string; sk: string }[],
): Promise<void> {
  if (puts.length + deletes.length > maxTransactItems) {
    await putAll(puts);
    await deleteAll(deletes);
    return;
  }
  if (puts.length + deletes.length === 0) return;
  await transact([
    ...puts.map((item) => ({ Put: { TableName: tableName(), Item: item } })),
    ...deletes.map(({ pk, sk }) => ({ Delete: { TableName: tableName(), Key: { pk, sk } } })),
  ]);
}

/** Deletes many items by key, as putAll writes them. */
export function deleteAll(itemKeys: readonly { pk: string; sk: string }[]): Promise<void> {
  return writeAll(itemKeys.map(({ pk, sk }) => ({ DeleteRequest: { Key: { pk, sk } } })));
}

async function writeAll(requests: readonly WriteRequest[], parallelism = 4): Promise<void> {
  const chunks: WriteRequest[][] = [];
  for (let start = 0; start < requests.length; start += 25) chunks.push(requests.slice(start, start + 25));
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

async function writeChunk(chunk: WriteRequest[]): Promise<void> {
  let requests = chunk;
  for (let attempt = 0; requests.length > 0; attempt++) {
    if (attempt === 8) throw new Error(`DynamoDB left ${requests.length} writes unprocessed after ${attempt} attempts`);
    if (attempt > 0) await new Promise((resolve) => setTimeout(resolve, 50 * 2 ** attempt));
    const result = await db().send(new BatchWriteCommand({ RequestItems: { [tableName()]: requests } }));
    requests = result.UnprocessedItems?.[tableName()] ?? [];
  }
}

/**
 * Runs one conditional write (`db().send` of a Put, Update or Delete with a condition). Returns
 * `false` when its condition failed (the caller decides what that means: not found, conflict,
 * re-read), and rethrows anything else.
 */
export async function writeIf(write: () => Promise<unknown>): Promise<boolean> {
  try {
    await write();
    return true;
  } catch (error) {
    if (error instanceof ConditionalCheckFailedException) return false;
    throw error;
  }
}

/**
 * One conditional write of one item (a Put, an Update or a Delete), `false` when its condition failed.
 * In a request that still owes its audit record it is a transaction of the item and the record
 * (`transactOrReasons`); elsewhere the single write it is.
 */
export async function writeItem(item: TransactItem): Promise<boolean> {
  if (pendingAudit()) return (await transactOrReasons([item])).written;
  if (item.Put) return writeIf(() => db().send(new PutCommand(item.Put)));
  if (item.Update) return writeIf(() => db().send(new UpdateCommand(item.Update)));
  if (item.Delete) return writeIf(() => db().send(new DeleteCommand(item.Delete)));
  throw new Error('A condition check alone writes nothing');
}

/**
 * An Update that answers the item as it is after it: `written`, and the item (the new one, or, when
 * the condition failed, the one that failed it; undefined when there is none). A transaction answers
 * no item, so in a request that owes its audit record the item is read after the write.
 */
export async function updateReturning<T>(update: UpdateInput): Promise<{ written: boolean; item: T | undefined }> {
  const key = update.Key as { pk: string; sk: string };
  if (pendingAudit()) {
    const written = (await transactOrReasons([{ Update: update }])).written;
    return { written, item: await getItem<T>(key) };
  }
  try {
    const result = await db().send(new UpdateCommand({ ...update, ReturnValues: 'ALL_NEW' }));
    return { written: true, item: result.Attributes as T };
  } catch (error) {
    if (!(error instanceof ConditionalCheckFailedException)) throw error;
    return { written: false, item: await getItem<T>(key) };
  }
}

type UpdateInput = Operations['Update'];

type Operations = Required<
  Pick<NonNullable<TransactWriteCommandInput['TransactItems']>[number], 'ConditionCheck' | 'Put' | 'Delete' | 'Update'>
>;

/**
 * One item of a TransactWriteItems: exactly one of its four operations. (The SDK's own type takes
 * any object, a named item of transaction.ts included, which DynamoDB would then refuse.)
 */
export type TransactItem = {
  [Operation in keyof Operations]: Pick<Operations, Operation> & Partial<Record<Exclude<keyof Operations, Operation>, never>>;
}[keyof Operations];

/**
 * Runs a transaction of raw items, for the store's own writes (replaceItems). Returns `false` when a
 * condition check cancelled it, and rethrows anything else. Every other module writes through
 * transaction.ts, which says which items failed by their names.
 */
export async function transact(items: readonly TransactItem[]): Promise<boolean> {
  return (await transactOrReasons(items)).written;
}

/** How many times a transaction cancelled only for a conflict with another transaction is tried. */
const conflictAttempts = 8;

/** Whether a partition key is an idempotency record's (a transaction tells its failed conditions apart by it). */
const isIdempotencyRecord = (pk: unknown) => typeof pk === 'string' && pk.startsWith(stored.idempotency.partitionPrefix({}));

/**
 * Like `transact`, and on a failed condition the indexes of the items whose condition failed: what
 * transaction.ts turns into the names of those items (nothing else reads the indexes). An
 * idempotent request's own record failing its condition is not the operation's business: another
 * attempt of the same request took it over (this one outlived its deadline), so this one stops.
 *
 * DynamoDB cancels a transaction that meets another one on the same item at the same moment
 * (`TransactionConflict`), writing nothing; the SDK does not retry it. Counts, claims and tenant
 * items are shared by many writes, so that is routine under load, and no answer a caller could act
 * on: the transaction is tried again after a short, jittered, growing pause, its conditions judged
 * afresh each time.
 */
export async function transactOrReasons(
  items: readonly TransactItem[],
): Promise<{ written: true } | { written: false; failedConditions: number[] }> {
  const audit = pendingAudit();
  return audit
    ? audit.commitWith(items, (all) => transactRetryingConflicts(all as TransactItem[]))
    : transactRetryingConflicts(items);
}

async function transactRetryingConflicts(
  items: readonly TransactItem[],
): Promise<{ written: true } | { written: false; failedConditions: number[] }> {
  for (let attempt = 1; ; attempt++) {
    try {
      await db().send(new TransactWriteCommand({ TransactItems: [...items] }));
      return { written: true };
    } catch (error) {
      const reasons = error instanceof TransactionCanceledException ? (error.CancellationReasons ?? []) : [];
      const failedConditions = reasons.flatMap((reason, index) => (reason.Code === 'ConditionalCheckFailed' ? [index] : []));
      if (failedConditions.some((index) => isIdempotencyRecord(items[index]?.Update?.Key?.pk))) throw supersededAttempt();
      if (failedConditions.length > 0) return { written: false, failedConditions };
      const conflict = reasons.some((reason) => reason.Code === 'TransactionConflict');
      if (!conflict || attempt === conflictAttempts) throw error;
      await new Promise((resolve) => setTimeout(resolve, (10 + Math.random() * 20) * 2 ** Math.min(attempt - 1, 5)));
    }
  }
}

export interface Page<T> {
  items: T[];
  nextCursor: string | null;
  /**
   * The cursor that resumes after the first `count` items (`nextCursor` after all of them): an
   * answer cut to what fits in one Lambda result hands the rest to the next call (pageResponse).
   */
  cursorAfter: (count: number) => string | null;
}

/** The page with each item mapped (one for one, in order, so cursorAfter still counts the same items). */
export const mapPage = <T, U>(page: Page<T>, map: (item: T) => U): Page<U> => ({ ...page, items: page.items.map(map) });

const maxPageSize = 100;

/** What a list reads: one partition (of the table, or of a global index), optionally only the sort keys starting with `prefix`. */
interface ListQuery {
  index?: IndexName;
  partition: string;
  prefix?: string;
  /** Only the sort keys before this one (instead of `prefix`). */
  below?: string;
  cursor: string | undefined;
  newestFirst?: boolean;
}

/**
 * One page of a partition (of the table, or of a global index), optionally only the sort keys
 * starting with `prefix`. The cursor is the last evaluated key, base64url encoded; a cursor that
 * was not issued for this partition is a 400, never a DynamoDB error.
 *
 * `nextCursor` is null exactly on the last page. DynamoDB names a last evaluated key whenever a
 * Query stops at its Limit, also when nothing follows, so the page reads one item past its size:
 * only when that one comes back is there a next page, which then starts after the page's last item.
 * A Query cut short by DynamoDB's 1 MB per call goes on from where it stopped, never past that one
 * extra item.
 */
export async function queryPage<T>(options: ListQuery & { limit: number }): Promise<Page<T>> {
  const size = Math.min(options.limit, maxPageSize);
  const items: T[] = [];
  let startKey = startKeyOf(options);
  do {
    const result = await db().send(new QueryCommand(listQueryInput(options, size + 1 - items.length, startKey)));
    items.push(...((result.Items ?? []) as T[]));
    startKey = result.LastEvaluatedKey;
  } while (startKey && items.length <= size);
  if (items.length <= size) return pageOf(items, null, options.index);
  const page = items.slice(0, size);
  return pageOf(page, cursorAfterItem(page.at(-1), options.index), options.index);
}

/**
 * The most items a filtered page reads, kept or not, before it answers: a filter few items pass
 * costs a request this much at most, never the whole list.
 */
export const maxItemsReadPerFilteredPage = 1000;

/**
 * One page of a list, as queryPage reads it, holding only the items `keep` accepts (a list's
 * filters: a delivery's status, a run's agent). It reads on until it has a page, the list ends, or
 * it has read `maxItemsReadPerFilteredPage` items; then the page holds fewer than `limit` items,
 * maybe none, and `nextCursor` goes on after the last item read. So a caller follows `nextCursor`
 * until it is null, as on every list, and never counts items.
 */
export async function queryFilteredPage<T>(options: ListQuery & { limit: number; keep: (item: T) => boolean }): Promise<Page<T>> {
  const size = Math.min(options.limit, maxPageSize);
  const kept: T[] = [];
  let read = 0;
  let startKey = startKeyOf(options);
  // Each read asks for what the page lacks (at least 50), doubling while few items pass: a page of
  // `limit` items most of which pass costs about `limit` items, not the most a page may read.
  let batch = Math.max(size + 1, 50);
  do {
    const result = await db().send(
      new QueryCommand(listQueryInput(options, Math.min(batch, maxItemsReadPerFilteredPage - read), startKey)),
    );
    batch *= 2;
    const items = (result.Items ?? []) as T[];
    read += items.length;
    startKey = result.LastEvaluatedKey;
    for (const item of items) {
      if (options.keep(item)) kept.push(item);
      if (kept.length > size) break;
    }
  } while (startKey && kept.length <= size && read < maxItemsReadPerFilteredPage);
  if (kept.length > size) {
    const page = kept.slice(0, size);
    return pageOf(page, cursorAfterItem(page.at(-1), options.index), options.index);
  }
  return pageOf(kept, startKey ? cursorAfterItem(startKey, options.index) : null, options.index);
}

/** The first item of a list (the newest, `newestFirst`), if any: one Query of one item, with no page around it. */
export async function queryFirst<T>(options: Omit<ListQuery, 'cursor'>): Promise<T | undefined> {
  const result = await db().send(new QueryCommand(listQueryInput(options, 1, undefined)));
  return result.Items?.[0] as T | undefined;
}

/** The Query of a list's next `limit` items, from after `startKey` (from its start without one). */
function listQueryInput(
  options: Omit<ListQuery, 'cursor'>,
  limit: number,
  startKey: Record<string, unknown> | undefined,
): QueryCommandInput {
  const names = keyNamesOf(options.index);
  return {
    TableName: tableName(),
    IndexName: names.indexName,
    ...keyCondition(
      names,
      options.partition,
      options.below === undefined ? { prefix: options.prefix } : { below: options.below },
    ),
    Limit: limit,
    ScanIndexForward: !options.newestFirst,
    ExclusiveStartKey: startKey,
  };
}

/** A page whose items are as read (with their keys), so that cursorAfter can name where any of them ends. */
function pageOf<T>(items: T[], nextCursor: string | null, index: IndexName | undefined): Page<T> {
  const cursorAfter = (count: number) => (count >= items.length ? nextCursor : cursorAfterItem(items[count - 1], index));
  return { items, nextCursor, cursorAfter };
}

/** The cursor that resumes after an item as read (with its keys): its key, as a last evaluated key names it. */
function cursorAfterItem(item: unknown, index: IndexName | undefined): string {
  if (!item) throw new Error('A page cut before its first item has no cursor');
  const key = item as Record<string, unknown>;
  return encodeCursor(Object.fromEntries(keyAttributesOf(index).map((name) => [name, key[name]])));
}

/**
 * A list a client may read whole or in pages: without `limit`, every item (from `cursor`, if
 * given, to the end), read as queryAll reads; with it, one page, as queryPage reads.
 */
export async function queryList<T>(options: Omit<ListQuery, 'newestFirst'> & { limit: number | undefined }): Promise<Page<T>> {
  const { limit } = options;
  if (limit !== undefined) return queryPage<T>({ ...options, limit });
  const startKey = startKeyOf(options);
  const items = await queryPages<T>(options.partition, { prefix: options.prefix }, { index: options.index, startKey });
  return pageOf(items, null, options.index);
}

/** The key a list's cursor names, checked to be of this list. */
function startKeyOf(options: ListQuery): Record<string, string> | undefined {
  if (options.cursor === undefined) return undefined;
  const names = keyNamesOf(options.index);
  const startKey = decodeCursor(options.cursor, keyAttributesOf(options.index));
  const sortValue = startKey[names.sort] ?? '';
  const inRange = options.below === undefined ? sortValue.startsWith(options.prefix ?? '') : sortValue < options.below;
  if (startKey[names.partition] !== options.partition || !inRange) throw invalidCursor();
  return startKey;
}

/** The attributes of a cursor (a last evaluated key): the table's key, and the index's on an index. */
function keyAttributesOf(index: IndexName | undefined): string[] {
  const names = keyNamesOf(index);
  const tableKeys = [tableDefinition.partitionKey, tableDefinition.sortKey];
  return names.indexName ? [...tableKeys, names.partition, names.sort] : tableKeys;
}

/** The 400 of a cursor that is not one of the list's own. */
export const invalidCursor = () =>
  badRequest(
    'Invalid cursor',
    [{ location: 'query', pointer: '/cursor', message: 'is not a cursor from this list' }],
    'invalid_query_parameter',
  );

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
