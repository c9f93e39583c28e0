import { createHash } from 'node:crypto';
import { GetCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { db, type Page, queryAll, queryPage, tableName, writeIf, transactOrReasons } from '../store/dynamo.ts';
import { keys } from '../store/keys.ts';
import type { SchedulingGranularity } from './schedule-file.ts';
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

/** Partitions of the due-schedules index: enough to spread writes, few enough to read each minute. */
export const dueShards = 16;

const shardOf = (tenantId: number, scheduleId: number) =>
  createHash('sha256').update(`${tenantId}:${scheduleId}`).digest().readUInt16BE(0) % dueShards;

/** The record as an item: in the due index exactly when it has a next fire. */
export function scheduleItem(record: ScheduleRecord) {
  const due =
    record.nextFireAt === undefined
      ? {}
      : keys.dueSchedulesIndex(
          shardOf(record.tenantId, record.scheduleId),
          record.nextFireAt,
          record.tenantId,
          record.scheduleId,
        );
  return { ...keys.schedule(record.tenantId, record.scheduleId), ...record, ...due };
}

export async function findSchedule(tenantId: number, scheduleId: number): Promise<ScheduleRecord | undefined> {
  const result = await db().send(
    new GetCommand({ TableName: tableName(), Key: keys.schedule(tenantId, scheduleId), ConsistentRead: true }),
  );
  return result.Item && withoutKeys(result.Item);
}

const withoutKeys = (item: Record<string, unknown>): ScheduleRecord => {
  const { tenantId, scheduleId, file, version, minuteTriggers, nextFireAt } = item as unknown as ScheduleRecord;
  return { tenantId, scheduleId, file, version, minuteTriggers, ...(nextFireAt === undefined ? {} : { nextFireAt }) };
};

export async function listScheduleRecords(tenantId: number, limit: number, cursor: string | undefined) {
  const page = await queryPage<Record<string, unknown>>({
    partition: keys.tenant(tenantId).pk,
    prefix: keys.schedulesPrefix,
    limit,
    cursor,
  });
  return { items: page.items.map(withoutKeys), nextCursor: page.nextCursor } satisfies Page<ScheduleRecord>;
}

/** The tenant's schedules that have Minute triggers (what stops its granularity going back to hours). */
export async function schedulesWithMinuteTriggers(tenantId: number): Promise<ScheduleRecord[]> {
  const items = await queryAll<Record<string, unknown>>(keys.tenant(tenantId).pk, keys.schedulesPrefix);
  return items.map(withoutKeys).filter((record) => record.minuteTriggers);
}

export type WriteOutcome = 'written' | 'version_changed' | 'tenant_changed';

/**
 * Writes a schedule if it is still at `expectedVersion` (undefined: must not exist yet), together
 * with the tenant's count of schedules that have Minute triggers, in one transaction. A schedule
 * with Minute triggers is written only while the tenant's granularity is `minutes`, and the
 * granularity goes back to `hours` only while that count is zero (see updateSchedulingGranularity),
 * so neither can slip past the other.
 */
export async function writeSchedule(
  record: ScheduleRecord,
  expectedVersion: number | undefined,
  minuteCountChange: -1 | 0 | 1,
): Promise<WriteOutcome> {
  const tenantItem = tenantGuard(record.tenantId, record.minuteTriggers, minuteCountChange);
  const outcome = await transactOrReasons([
    {
      Put: {
        TableName: tableName(),
        Item: scheduleItem(record),
        ...(expectedVersion === undefined
          ? { ConditionExpression: 'attribute_not_exists(pk)' }
          : { ConditionExpression: 'version = :expected', ExpressionAttributeValues: { ':expected': expectedVersion } }),
      },
    },
    ...(tenantItem ? [tenantItem] : []),
  ]);
  if (outcome.written) return 'written';
  return outcome.failedConditions.includes(0) ? 'version_changed' : 'tenant_changed';
}

/** Deletes a schedule still at `expectedVersion`, keeping the tenant's Minute count right. */
export async function deleteScheduleRecord(record: ScheduleRecord): Promise<WriteOutcome> {
  const tenantItem = tenantGuard(record.tenantId, false, record.minuteTriggers ? -1 : 0);
  const outcome = await transactOrReasons([
    {
      Delete: {
        TableName: tableName(),
        Key: keys.schedule(record.tenantId, record.scheduleId),
        ConditionExpression: 'version = :expected',
        ExpressionAttributeValues: { ':expected': record.version },
      },
    },
    ...(tenantItem ? [tenantItem] : []),
  ]);
  if (outcome.written) return 'written';
  return outcome.failedConditions.includes(0) ? 'version_changed' : 'tenant_changed';
}

/** The tenant side of a schedule write: live, minute granularity when needed, Minute count kept. */
function tenantGuard(tenantId: number, needsMinutes: boolean, minuteCountChange: number) {
  const condition = `attribute_not_exists(deletedAt)${needsMinutes ? ' AND schedulingGranularity = :minutes' : ''}`;
  const values = needsMinutes ? { ':minutes': 'minutes' } : {};
  if (minuteCountChange !== 0) {
    return {
      Update: {
        TableName: tableName(),
        Key: keys.tenant(tenantId),
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
          Key: keys.tenant(tenantId),
          ConditionExpression: condition,
          ExpressionAttributeValues: values,
        },
      }
    : undefined;
}

/** The due-index entries at or before `instant` on one shard (eventually consistent: the claim re-checks). */
export async function dueScheduleRecords(shard: number, instant: string): Promise<ScheduleRecord[]> {
  const items = await queryAll<Record<string, unknown>>(keys.dueSchedulesShard(shard), '', {
    index: 'gsi1',
    // '~' sorts after the digits that follow the instant in the index key.
    upTo: `${instant}#~`,
  });
  return items.map(withoutKeys);
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
  status: 'firing' | 'fired' | 'failed';
  flows: Array<{ flowId: number; context: string; tokenId?: number; status: string }>;
  error?: string;
  /** TTL (epoch seconds): runs are kept 90 days. */
  expiresAt: number;
}

export const scheduleRunRetentionDays = 90;

/**
 * Claims `run.slot` and moves the schedule on to `nextFireAt` in one transaction: the run item's
 * key is the slot, so a slot is claimed once however many ticks race for it, and the schedule
 * must still be at the version and next fire the tick read. Without a run, only moves it on.
 * `already_fired`: the slot had been claimed (the schedule was still moved on).
 */
export async function claimSlot(
  schedule: ScheduleRecord,
  run: ScheduleRunRecord | undefined,
  nextFireAt: string | undefined,
): Promise<'claimed' | 'advanced' | 'already_fired' | 'schedule_changed'> {
  const advance = advanceItem(schedule, nextFireAt);
  const runItem = run && {
    Put: {
      TableName: tableName(),
      Item: { ...keys.scheduleRun(run.tenantId, run.scheduleId, run.slot), ...run },
      ConditionExpression: 'attribute_not_exists(pk)',
    },
  };
  const outcome = await transactOrReasons(runItem ? [advance, runItem] : [advance]);
  if (outcome.written) return run ? 'claimed' : 'advanced';
  if (outcome.failedConditions.includes(0)) return 'schedule_changed';
  const advanced = await transactOrReasons([advance]);
  return advanced.written ? 'already_fired' : 'schedule_changed';
}

function advanceItem(schedule: ScheduleRecord, nextFireAt: string | undefined) {
  const shard = shardOf(schedule.tenantId, schedule.scheduleId);
  const guard = {
    ConditionExpression: 'version = :version AND nextFireAt = :seen',
    TableName: tableName(),
    Key: keys.schedule(schedule.tenantId, schedule.scheduleId),
  };
  const seen = { ':version': schedule.version, ':seen': schedule.nextFireAt };
  if (nextFireAt === undefined) {
    return {
      Update: { ...guard, UpdateExpression: 'REMOVE nextFireAt, gsi1pk, gsi1sk', ExpressionAttributeValues: seen },
    };
  }
  const due = keys.dueSchedulesIndex(shard, nextFireAt, schedule.tenantId, schedule.scheduleId);
  return {
    Update: {
      ...guard,
      UpdateExpression: 'SET nextFireAt = :next, gsi1pk = :gsi1pk, gsi1sk = :gsi1sk',
      ExpressionAttributeValues: { ...seen, ':next': nextFireAt, ':gsi1pk': due.gsi1pk, ':gsi1sk': due.gsi1sk },
    },
  };
}

/** Records how a claimed run went. */
export async function finishRun(
  run: Pick<ScheduleRunRecord, 'tenantId' | 'scheduleId' | 'slot'>,
  outcome: Pick<ScheduleRunRecord, 'status' | 'flows' | 'error'>,
): Promise<void> {
  await db().send(
    new UpdateCommand({
      TableName: tableName(),
      Key: keys.scheduleRun(run.tenantId, run.scheduleId, run.slot),
      UpdateExpression: `SET #status = :status, flows = :flows${outcome.error ? ', #error = :error' : ''}`,
      ExpressionAttributeNames: { '#status': 'status', ...(outcome.error ? { '#error': 'error' } : {}) },
      ExpressionAttributeValues: {
        ':status': outcome.status,
        ':flows': outcome.flows,
        ...(outcome.error ? { ':error': outcome.error } : {}),
      },
    }),
  );
}

export function listScheduleRuns(tenantId: number, scheduleId: number, limit: number, cursor: string | undefined) {
  return queryPage<ScheduleRunRecord>({
    partition: keys.tenant(tenantId).pk,
    prefix: keys.scheduleRunsPrefix(scheduleId),
    limit,
    cursor,
    newestFirst: true,
  });
}

/** Sets the tenant's granularity; lowering it to hours needs the tenant's Minute count at zero. */
export async function updateSchedulingGranularity(
  tenantId: number,
  clientId: number,
  granularity: SchedulingGranularity,
  updatedAt: string,
): Promise<boolean> {
  return writeIf(() =>
    db().send(
      new UpdateCommand({
        TableName: tableName(),
        Key: keys.tenant(tenantId),
        UpdateExpression: 'SET schedulingGranularity = :granularity, updatedAt = :updatedAt',
        ConditionExpression: `clientId = :clientId AND attribute_not_exists(deletedAt)${
          granularity === 'hours' ? ' AND (attribute_not_exists(minuteSchedules) OR minuteSchedules <= :zero)' : ''
        }`,
        ExpressionAttributeValues: {
          ':clientId': clientId,
          ':granularity': granularity,
          ':updatedAt': updatedAt,
          ...(granularity === 'hours' ? { ':zero': 0 } : {}),
        },
      }),
    ),
  );
}
