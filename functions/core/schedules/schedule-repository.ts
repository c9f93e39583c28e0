import { createHash } from 'node:crypto';
import { DeleteCommand, PutCommand, QueryCommand } from '@aws-sdk/lib-dynamodb';
import { db, getAll, getItem, mapPage, putAll, queryAll, queryPage, tableName, writeItem } from '#functions/core/store/dynamo.ts';
import { type CountKey, countedTransaction, readCount } from '#functions/core/store/counts.ts';
import * as stored from '#functions/core/store/entity-declarations.ts';
import { type Alongside, type AlongsideName, transaction } from '#functions/core/store/transaction.ts';
import { dispatchSettings } from './dispatch-settings.ts';
import { isUtcInstant } from './instants.ts';
import type { ScheduleFile } from './schedule-types.ts';

/** A stored schedule: the file as the API shows it, plus what the dispatcher needs to find it. */
export interface ScheduleRecord {
  tenantId: number;
  scheduleId: number;
  /** The file with the service's fields (version, audit) in its body. */
  file: ScheduleFile;
  version: number;
  minuteTriggers: boolean;
  /** ISO instant of the next fire; absent when inactive or when no trigger fires again. */
  nextFireAt?: string;
}

/** Schedule ids per block: a block of one tenant's schedules shares a shard of the due index (a Query page's worth). */
export const shardBlockSize = 500;

/**
 * The shard of the due-schedules index a schedule is on (dispatch-settings.ts: dueShards). A tenant
 * starts on a shard of its own hash, and each block of `shardBlockSize` schedule ids goes on the
 * next shard: a tenant with a few hundred schedules keeps them on one shard, so its due schedules
 * share fire messages and a fire worker reads its flows once for all of them, while one with
 * thousands due at the same minute is spread over every shard, listed by all of them in parallel
 * and written to all of their index partitions, instead of holding back the other tenants of one.
 */
export const shardOf = (tenantId: number, scheduleId: number) =>
  (createHash('sha256').update(String(tenantId)).digest().readUInt16BE(0) + Math.floor(scheduleId / shardBlockSize)) %
  dispatchSettings().dueShards;

/**
 * A schedule's entry in the due index. Within an instant a shard lists its entries in turns: every
 * tenant's first schedule of its block, then every tenant's second, and so on, so each page of a
 * shard holds some of every tenant's due schedules. In tenant order, a tenant with thousands due
 * would fill a shard's first pages, and the tenants after it would wait for them to be listed.
 */
export function dueIndexEntry(tenantId: number, scheduleId: number, nextFireAt: string) {
  // The key's order is time order only for instants written alike, with four-digit years (instants.ts):
  // a `+010000-…` key would sort before every real instant, so each tick would list it as due.
  if (!isUtcInstant(nextFireAt)) throw new RangeError(`Not a next fire within the schedule horizon: ${nextFireAt}`);
  return stored.schedule.indexEntry({
    shard: shardOf(tenantId, scheduleId),
    nextFireAt,
    turn: scheduleId % shardBlockSize,
    tenantId,
    scheduleId,
  });
}

/** The record as an item: in the due index exactly when it has a next fire. */
export function scheduleItem(record: ScheduleRecord) {
  const due = record.nextFireAt === undefined ? {} : dueIndexEntry(record.tenantId, record.scheduleId, record.nextFireAt);
  return { ...stored.schedule.key(record), ...record, ...due };
}

export async function findSchedule(tenantId: number, scheduleId: number): Promise<ScheduleRecord | undefined> {
  const item = await getItem<Record<string, unknown>>(stored.schedule.key({ tenantId, scheduleId }));
  return item && withoutKeys(item);
}

/** Several schedules in one BatchGetItem per hundred (consistent), by `tenantId:scheduleId`; missing ones are left out. */
export async function findSchedules(
  wanted: readonly Pick<ScheduleRecord, 'tenantId' | 'scheduleId'>[],
): Promise<Map<string, ScheduleRecord>> {
  const items = await getAll<Record<string, unknown>>(wanted.map((schedule) => stored.schedule.key(schedule)));
  return new Map(items.map(withoutKeys).map((record) => [scheduleKey(record), record]));
}

export const scheduleKey = ({ tenantId, scheduleId }: Pick<ScheduleRecord, 'tenantId' | 'scheduleId'>) =>
  `${tenantId}:${scheduleId}`;

const withoutKeys = (item: Record<string, unknown>): ScheduleRecord => {
  const { tenantId, scheduleId, file, version, minuteTriggers, nextFireAt } = item as unknown as ScheduleRecord;
  return { tenantId, scheduleId, file, version, minuteTriggers, ...(nextFireAt === undefined ? {} : { nextFireAt }) };
};

export async function listScheduleRecords(tenantId: number, limit: number, cursor: string | undefined) {
  const page = await queryPage<Record<string, unknown>>({
    partition: stored.schedule.partition({ tenantId }),
    prefix: stored.schedule.keyPrefix({}),
    limit,
    cursor,
  });
  return mapPage(page, withoutKeys);
}

/** The tenant's schedules that have Minute triggers (what stops its granularity going back to hours). */
export async function schedulesWithMinuteTriggers(tenantId: number): Promise<ScheduleRecord[]> {
  const items = await queryAll<Record<string, unknown>>(stored.schedule.partition({ tenantId }), stored.schedule.keyPrefix({}));
  return items.map(withoutKeys).filter((record) => record.minuteTriggers);
}

export type WriteOutcome = 'written' | 'version_changed' | 'tenant_changed';

/** How many schedules the tenant has (schedules.ts `maxSchedulesPerTenant`): `COUNT#SCHEDULES` in its partition. */
const scheduleCount = (tenantId: number): CountKey => stored.tenantCount.key({ tenantId, name: 'SCHEDULES' });

/** A decrease is never refused: its count's quota does not matter. */
const noMaximum = Number.MAX_SAFE_INTEGER;

/** The tenant's schedule count. */
export function findScheduleCount(tenantId: number): Promise<number> {
  return readCount(scheduleCount(tenantId));
}

/**
 * Writes a schedule if it is still at `expectedVersion` (undefined: must not exist yet), together
 * with the tenant's count of schedules that have Minute triggers, in one transaction. A schedule
 * with Minute triggers is written only while the tenant's granularity is `minutes`, and the
 * granularity goes back to `hours` only while that count is zero (see updateSchedulingGranularity),
 * so neither can slip past the other. A creation (no `expectedVersion`) also adds one to the
 * tenant's schedule count in that transaction: `limit` when the tenant has `max` schedules already
 * (the count's condition, whatever runs at the same time); a replacement counts nothing.
 */
export async function writeSchedule(
  record: ScheduleRecord,
  expectedVersion: number | undefined,
  minuteCountChange: -1 | 0 | 1,
  max: number,
): Promise<WriteOutcome | 'limit'> {
  const tenantItem = tenantGuard(record.tenantId, record.minuteTriggers, minuteCountChange);
  const tx = transaction<'schedule' | 'tenant'>().add('schedule', {
    Put: {
      TableName: tableName(),
      Item: scheduleItem(record),
      ...(expectedVersion === undefined
        ? { ConditionExpression: 'attribute_not_exists(pk)' }
        : { ConditionExpression: 'version = :expected', ExpressionAttributeValues: { ':expected': expectedVersion } }),
    },
  });
  if (tenantItem) tx.add('tenant', tenantItem);
  const { tenantId } = record;
  const outcome =
    expectedVersion === undefined ? await countedTransaction(scheduleCount(tenantId), { delta: 1, max }, tx) : await tx.commit();
  if (outcome.written) return 'written';
  if ('limit' in outcome) return 'limit';
  return outcome.failed.has('schedule') ? 'version_changed' : 'tenant_changed';
}

/** Deletes a schedule still at `expectedVersion`, keeping the tenant's Minute count and schedule count right. */
export async function deleteScheduleRecord(record: ScheduleRecord): Promise<WriteOutcome> {
  const { tenantId } = record;
  const tenantItem = tenantGuard(tenantId, false, record.minuteTriggers ? -1 : 0);
  const tx = transaction<'schedule' | 'tenant'>().add('schedule', {
    Delete: {
      TableName: tableName(),
      Key: stored.schedule.key({ tenantId, scheduleId: record.scheduleId }),
      ConditionExpression: 'version = :expected',
      ExpressionAttributeValues: { ':expected': record.version },
    },
  });
  if (tenantItem) tx.add('tenant', tenantItem);
  const outcome = await countedTransaction(scheduleCount(tenantId), { delta: -1, max: noMaximum }, tx);
  if (outcome.written) return 'written';
  if ('limit' in outcome) throw new Error('A decrease is never over its quota');
  return outcome.failed.has('schedule') ? 'version_changed' : 'tenant_changed';
}

/** The tenant side of a schedule write: live, minute granularity when needed, Minute count kept. */
function tenantGuard(tenantId: number, needsMinutes: boolean, minuteCountChange: number) {
  const condition = `attribute_not_exists(deletedAt)${needsMinutes ? ' AND schedulingGranularity = :minutes' : ''}`;
  const values = needsMinutes ? { ':minutes': 'minutes' } : {};
  if (minuteCountChange !== 0) {
    return {
      Update: {
        TableName: tableName(),
        Key: stored.tenant.key({ tenantId }),
        UpdateExpression: 'ADD minuteSchedules :change',
        ConditionExpression: condition,
        ExpressionAttributeValues: { ...values, ':change': minuteCountChange },
      },
    };
  }
  return needsMinutes
    ? {
        ConditionCheck: {
          TableName: tableName(),
          Key: stored.tenant.key({ tenantId }),
          ConditionExpression: condition,
          ExpressionAttributeValues: values,
        },
      }
    : undefined;
}

/** A schedule found due: the stored next fire the tick saw is what the fire worker checks it against. */
export interface DueSchedule {
  tenantId: number;
  scheduleId: number;
  dueAt: string;
}

/**
 * One page of a shard's due-index entries, oldest first, after the index key `after` (when given)
 * and at or before `instant`: only what the fire worker needs to find each schedule, and the index
 * key of the last one when more may follow. The index is eventually consistent; the fire worker
 * reads each schedule consistently before it fires.
 */
export async function dueSchedulesPage(
  shard: number,
  instant: string,
  options: { after?: string; limit: number },
): Promise<{ schedules: DueSchedule[]; last?: string }> {
  const page = await db().send(
    new QueryCommand({
      TableName: tableName(),
      IndexName: 'gsi1',
      KeyConditionExpression: `gsi1pk = :shard AND gsi1sk ${options.after === undefined ? '<= :upTo' : 'BETWEEN :from AND :upTo'}`,
      ExpressionAttributeValues: {
        ':shard': stored.schedule.indexes.gsi1.partition({ shard }),
        // '~' sorts after the digits that follow the instant in the index key.
        ':upTo': `${instant}#~`,
        // No key of the index extends another (entity-declarations.ts: schedule): `${after}~` sorts above
        // `after` and below every key after it.
        ...(options.after === undefined ? {} : { ':from': `${options.after}~` }),
      },
      ProjectionExpression: 'gsi1sk, tenantId, scheduleId, nextFireAt',
      Limit: options.limit,
    }),
  );
  const items = (page.Items ?? []) as Array<
    { gsi1sk: string } & Required<Pick<ScheduleRecord, 'tenantId' | 'scheduleId' | 'nextFireAt'>>
  >;
  const schedules = items.map(({ tenantId, scheduleId, nextFireAt }) => ({ tenantId, scheduleId, dueAt: nextFireAt }));
  const last = page.LastEvaluatedKey ? items.at(-1)?.gsi1sk : undefined;
  return { schedules, ...(last ? { last } : {}) };
}

/** Where the previous tick stopped listing a shard, when it ran out of time before the end. */
export async function findDispatchCursor(shard: number): Promise<string | undefined> {
  return (await getItem<{ after: string }>(stored.dispatchCursor.key({ shard })))?.after;
}

/**
 * How many due-index shards a tick lists: the highest count any deployment has written to, raised
 * to `configured` when that is higher (kept in the table, so a lower setting never stops the listing
 * of shards that still hold entries; they move to the lower shards as they fire).
 */
export async function dispatchShardCount(configured: number): Promise<number> {
  const recorded = (await getItem<{ count: number }>(stored.dispatchShards.key({})))?.count ?? 0;
  if (recorded >= configured) return recorded;
  // A concurrent tick raising it as well, or higher, is as good.
  await writeItem({
    Update: {
      TableName: tableName(),
      Key: stored.dispatchShards.key({}),
      UpdateExpression: 'SET #count = :configured',
      ConditionExpression: 'attribute_not_exists(#count) OR #count < :configured',
      ExpressionAttributeNames: { '#count': 'count' },
      ExpressionAttributeValues: { ':configured': configured },
    },
  });
  return configured;
}

export async function saveDispatchCursor(shard: number, after: string): Promise<void> {
  await db().send(
    new PutCommand({
      TableName: tableName(),
      Item: { ...stored.dispatchCursor.key({ shard }), after, savedAt: new Date().toISOString() },
    }),
  );
}

export async function clearDispatchCursor(shard: number): Promise<void> {
  await db().send(new DeleteCommand({ TableName: tableName(), Key: stored.dispatchCursor.key({ shard }) }));
}

/** A schedule's fire of one slot, with what each of its flows became. */
export interface ScheduleRunRecord {
  tenantId: number;
  scheduleId: number;
  /** The slot fired, ISO UTC, and the same instant in the schedule's time zone. */
  slot: string;
  slotLocal: string;
  firedAt: string;
  scheduleVersion: number;
  /**
   * `failed`: the flows could not be queued (`error` says so) and the slot is being retried until an hour late; a
   * later fire replaces it.
   */
  status: 'fired' | 'failed';
  flows: Array<{ flowId: number; context: string; tokenId?: number; status: string }>;
  error?: string;
  /** TTL (epoch seconds): runs are kept `runRetentionDays` (store/retention.ts). */
  expiresAt: number;
}

/**
 * Writes runs (BatchWriteItem, 25 at a time). A run's key is its slot, so writing one again (a
 * message handled twice) replaces it rather than adding another.
 */
export function putRuns(runs: readonly ScheduleRunRecord[]): Promise<void> {
  return putAll(runs.map((run) => ({ ...stored.scheduleRun.key(run), ...run })));
}

/**
 * Writes the run of a slot whose flows could not be queued, unless a run of that slot says it fired
 * (another message for the same slot got there first): a failure never hides a fire.
 */
export async function putFailedRun(run: ScheduleRunRecord): Promise<void> {
  await writeItem({
    Put: {
      TableName: tableName(),
      Item: { ...stored.scheduleRun.key(run), ...run },
      ConditionExpression: 'attribute_not_exists(pk) OR #status <> :fired',
      ExpressionAttributeNames: { '#status': 'status' },
      ExpressionAttributeValues: { ':fired': 'fired' },
    },
  });
}

/**
 * Moves the schedule on to `nextFireAt` (out of the due index when undefined) if it is still at
 * the version and next fire it was read with. This conditional write is what makes a slot fire
 * once: however many workers race for it, only one moves the schedule on from it. `false`: it had
 * moved on already (fired by another message, edited or deleted). Given the next fire it was read
 * with, it writes the schedule's due-index entry again, as this version computes it. `alongside`
 * commits with it.
 */
export async function advanceSchedule(
  schedule: ScheduleRecord,
  nextFireAt: string | undefined,
  alongside: Alongside = [],
): Promise<boolean> {
  const update = advanceItem(schedule, nextFireAt);
  if (alongside.length === 0) return writeItem({ Update: update });
  // With the integrator's event of a slot that did not fire: sent once, by the claim that moved it on.
  const tx = transaction<'schedule' | AlongsideName>().add('schedule', { Update: update }).include(alongside);
  return (await tx.commit()).written;
}

function advanceItem(schedule: ScheduleRecord, nextFireAt: string | undefined) {
  const guard = {
    ConditionExpression: 'version = :version AND nextFireAt = :seen',
    TableName: tableName(),
    Key: stored.schedule.key(schedule),
  };
  const seen = { ':version': schedule.version, ':seen': schedule.nextFireAt };
  if (nextFireAt === undefined) {
    return { ...guard, UpdateExpression: 'REMOVE nextFireAt, gsi1pk, gsi1sk', ExpressionAttributeValues: seen };
  }
  const due = dueIndexEntry(schedule.tenantId, schedule.scheduleId, nextFireAt);
  return {
    ...guard,
    UpdateExpression: 'SET nextFireAt = :next, gsi1pk = :gsi1pk, gsi1sk = :gsi1sk',
    ExpressionAttributeValues: { ...seen, ':next': nextFireAt, ':gsi1pk': due.gsi1pk, ':gsi1sk': due.gsi1sk },
  };
}

/**
 * Marks a run `failed`, saying why in `error`, if its status is still `seen` (what the caller read):
 * `false` when it is not (written again since, or expired).
 */
export function markRunFailed(
  run: Pick<ScheduleRunRecord, 'tenantId' | 'scheduleId' | 'slot'>,
  seen: string,
  error: string,
): Promise<boolean> {
  return writeItem({
    Update: {
      TableName: tableName(),
      Key: stored.scheduleRun.key(run),
      UpdateExpression: 'SET #status = :failed, #error = :error',
      ConditionExpression: '#status = :seen',
      ExpressionAttributeNames: { '#status': 'status', '#error': 'error' },
      ExpressionAttributeValues: { ':failed': 'failed', ':error': error, ':seen': seen },
    },
  });
}

export function listScheduleRuns(tenantId: number, scheduleId: number, limit: number, cursor: string | undefined) {
  return queryPage<ScheduleRunRecord>({
    partition: stored.scheduleRun.partition({ tenantId }),
    prefix: stored.scheduleRun.keyPrefix({ scheduleId }),
    limit,
    cursor,
    newestFirst: true,
  });
}
