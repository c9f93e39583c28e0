import {
  deleteAll,
  getItem,
  maxTransactItems,
  nextTenantId,
  type Page,
  queryAll,
  queryBetween,
  queryList,
  tableName,
  type TransactItem,
  writeItem,
} from '#functions/core/store/dynamo.ts';
import { type CountKey, countedTransaction, readCount } from '#functions/core/store/counts.ts';
import type { FacetValues } from '#functions/core/store/entities.ts';
import * as stored from '#functions/core/store/entity-declarations.ts';
import {
  type Alongside,
  type AlongsideName,
  nameByKey,
  type Transaction,
  transaction,
} from '#functions/core/store/transaction.ts';
import { type PermissionRecord, permissionCharge } from './effective-permissions.ts';

/** Whose a permission record is: a user's or a group's (the permission declaration's `subject`). */
export type PermissionSubject = FacetValues<typeof stored.permission>['subject'];

export interface DatamartRecord {
  datamartId: number;
  tenantId: number;
  nome: string;
  /** Its tables and owners, in order: the record is the whole datamart, written in one commit. */
  tableIds: number[];
  ownerIds: number[];
  /**
   * Everything of it is in the tenant-wide indexes (its owners in the owners index, its permission
   * records in the permission index): true of every record since migration 1
   * (migrations/datamarts-in-tenant-indexes.ts). Still written, and never read: the release before
   * that migration reads a record without it the slow way.
   */
  tenantIndexed: true;
  createdAt: string;
  updatedAt: string;
}

/** A datamart's record and structure (tables, owners). */
export interface DatamartStructure {
  record: DatamartRecord;
  tableIds: number[];
  ownerIds: number[];
}

/** A permission record as stored: spec 2.4's fields plus whose it is and where. */
export interface StoredPermission extends PermissionRecord {
  pk: string;
  sk: string;
  gsi1pk?: string;
  tenantId: number;
  datamartId: number;
  subject: PermissionSubject;
  subjectId: number;
  /** The answer bytes it is charged to its subject's quota (effective-permissions.ts permissionCharge, directory/quotas.ts). */
  charge: number;
}

/**
 * The items that charge a subject's permission records to its quota, or give their charges back
 * (a user's to the user item, a group's to the tenant's count): the domain makes them
 * (permissions.ts), the repository adds them to the transactions that write or delete the records.
 */
export interface PermissionLedger {
  /** For a write of the subject's records: they fail their conditions when the subject is gone or a growth would pass its quota. */
  charge: (subject: PermissionSubject, subjectId: number, delta: number) => TransactItem[];
  /** For a sweep: gives back; a user's item fails its condition when the user is gone (their charges went with them). */
  release: (subject: PermissionSubject, subjectId: number, delta: number) => TransactItem[];
}

/** A record's write or delete only while it is as read (`undefined`: while there is none), by its charge. */
function asRead(
  record: StoredPermission | undefined,
): Pick<NonNullable<TransactItem['Put']>, 'ConditionExpression' | 'ExpressionAttributeValues'> {
  if (record === undefined) return { ConditionExpression: 'attribute_not_exists(pk)' };
  return { ConditionExpression: 'charge = :charge', ExpressionAttributeValues: { ':charge': record.charge } };
}

/** The structure a record holds. */
export const structureOf = (record: DatamartRecord): DatamartStructure => ({
  record,
  tableIds: record.tableIds,
  ownerIds: record.ownerIds,
});

/** The datamart's record and structure (one GetItem); `undefined` when there is none. */
export async function findStructure(tenantId: number, datamartId: number): Promise<DatamartStructure | undefined> {
  const record = await getItem<DatamartRecord>(stored.datamart.key({ tenantId, datamartId }));
  return record && structureOf(record);
}

export function allocateDatamartId(tenantId: number): Promise<number> {
  return nextTenantId(tenantId, 'datamart');
}

const recordItem = (record: DatamartRecord) => ({
  ...record,
  ...stored.datamart.key(record),
  ...stored.datamart.indexEntry(record),
});

/** What a datamart's write found: written, or the record or an owner (`alongside`) not as read. */
export type DatamartWrite = 'written' | 'changed' | 'condition_alongside';

/** What the callers of a datamart's write add to it: their request's record or follow-up, and its owners' entries in the owners index (directory-repository.ts). */
type DatamartAlongside = Alongside<'ownersIndexEntry'>;

/** The names of a datamart write's items: its record, and what comes with it. */
type DatamartItemName = 'datamart' | AlongsideName | 'ownersIndexEntry';

async function commit(tx: Transaction<DatamartItemName>): Promise<DatamartWrite> {
  const outcome = await tx.commit();
  if (outcome.written) return 'written';
  return outcome.failed.has('datamart') ? 'changed' : 'condition_alongside';
}

/** How many datamarts the tenant has (directory/quotas.ts `maxDatamartsPerTenant`): `COUNT#DATAMARTS` in its partition. */
const datamartCount = (tenantId: number): CountKey => stored.tenantCount.key({ tenantId, name: 'DATAMARTS' });

/** A decrease is never refused: its count's quota does not matter. */
const noMaximum = Number.MAX_SAFE_INTEGER;

/** The tenant's datamart count. */
export function findDatamartCount(tenantId: number): Promise<number> {
  return readCount(datamartCount(tenantId));
}

/**
 * Writes a new datamart (its record holds its tables and owners), with `alongside`, and one more
 * on the tenant's datamart count, in one commit: `condition_alongside` when a condition of
 * `alongside` failed, `limit` when the tenant has `max` datamarts already (the count's condition,
 * whatever runs at the same time).
 */
export async function insertDatamart(
  record: DatamartRecord,
  alongside: DatamartAlongside,
  max: number,
): Promise<DatamartWrite | 'limit'> {
  const { tenantId } = record;
  const tx = transaction<DatamartItemName>()
    .add('datamart', {
      Put: { TableName: tableName(), Item: recordItem(record), ConditionExpression: 'attribute_not_exists(pk)' },
    })
    .include(alongside);
  const outcome = await countedTransaction(datamartCount(tenantId), { delta: 1, max }, tx);
  if (outcome.written) return 'written';
  if ('limit' in outcome) return 'limit';
  if (outcome.failed.has('datamart')) throw new Error(`Datamart ${record.datamartId} of tenant ${tenantId} already exists`);
  return 'condition_alongside';
}

/**
 * Replaces the datamart's record with `next` if it is still as read (`updatedAt`), with
 * `alongside`, in one commit; `changed` when it changed or is gone.
 */
export function replaceDatamart(
  current: DatamartRecord,
  next: DatamartRecord,
  alongside: DatamartAlongside,
): Promise<DatamartWrite> {
  return commit(
    transaction<DatamartItemName>()
      .add('datamart', {
        Put: {
          TableName: tableName(),
          Item: recordItem(next),
          ConditionExpression: 'updatedAt = :seen',
          ExpressionAttributeValues: { ':seen': current.updatedAt },
        },
      })
      .include(alongside),
  );
}

/**
 * Deletes the datamart's record (it is gone at once), with `alongside`, and takes it off the
 * tenant's datamart count, in one commit; `false` when it is gone already.
 */
export async function deleteDatamartRecord(tenantId: number, datamartId: number, alongside: Alongside): Promise<boolean> {
  const tx = transaction<'datamart' | AlongsideName>()
    .add('datamart', {
      Delete: {
        TableName: tableName(),
        Key: stored.datamart.key({ tenantId, datamartId }),
        ConditionExpression: 'attribute_exists(pk)',
      },
    })
    .include(alongside);
  const outcome = await countedTransaction(datamartCount(tenantId), { delta: -1, max: noMaximum }, tx);
  return outcome.written;
}

/**
 * Brings the datamart's collection in line with its record: deletes everything when the record
 * is gone, otherwise the permission records on tables that are no longer in it (giving their
 * charges back). Each step is the same when repeated, so a retry or the sweeper finishes it.
 */
export async function tidyCollection(tenantId: number, datamartId: number, ledger: PermissionLedger): Promise<void> {
  const items = await queryAll<{ pk: string; sk: string } & Partial<DatamartRecord & StoredPermission>>(
    stored.datamart.partition({ tenantId, datamartId }),
    '',
  );
  const record = items.find((item) => item.sk === stored.datamart.keyPrefix({}));
  const tables = new Set(record?.tableIds);
  const isPermission = (item: { sk: string }) => item.sk.startsWith(stored.permission.keyPrefix({}));
  const leftOver = items.filter((item) => !record || (isPermission(item) && !tables.has(item.tableId as number)));
  await Promise.all([
    deleteRecords(leftOver.filter(isPermission) as StoredPermission[], ledger),
    deleteAll(leftOver.filter((item) => !isPermission(item)).map(({ pk, sk }) => ({ pk, sk }))),
  ]);
}

/**
 * Gives each record its entry in the tenant's permission index (migration 1 moves there the records
 * an earlier version indexed by subject): only its index keys, and only while it exists, so a record
 * replaced or deleted meanwhile keeps what that write gave it.
 */
export async function indexPermissionRecords(records: readonly StoredPermission[]): Promise<void> {
  await Promise.all(
    records.map((record) => {
      const entry = stored.permission.indexEntry(record);
      return writeItem({
        Update: {
          TableName: tableName(),
          Key: { pk: record.pk, sk: record.sk },
          UpdateExpression: 'SET gsi1pk = :pk, gsi1sk = :sk',
          ConditionExpression: 'attribute_exists(pk)',
          ExpressionAttributeValues: { ':pk': entry.gsi1pk, ':sk': entry.gsi1sk },
        },
      });
    }),
  );
}

/** Marks the datamart's record `tenantIndexed` while it exists: the last step of migration 1. */
export async function markTenantIndexed(tenantId: number, datamartId: number): Promise<void> {
  await writeItem({
    Update: {
      TableName: tableName(),
      Key: stored.datamart.key({ tenantId, datamartId }),
      UpdateExpression: 'SET tenantIndexed = :true',
      ConditionExpression: 'attribute_exists(pk)',
      ExpressionAttributeValues: { ':true': true },
    },
  });
}

/** The tenant's datamart records through the index listing them: all, or a page of `limit` (the records hold their lists). */
export function listDatamartRecords(
  tenantId: number,
  limit: number | undefined,
  cursor: string | undefined,
): Promise<Page<DatamartRecord>> {
  return queryList<DatamartRecord>({
    index: 'gsi1',
    partition: stored.datamart.indexes.gsi1.partition({ tenantId }),
    limit,
    cursor,
  });
}

/** Every datamart of the tenant, and which tables each has. */
export function listDatamartTables(tenantId: number): Promise<Array<Pick<DatamartRecord, 'datamartId' | 'tableIds'>>> {
  return queryAll(stored.datamart.indexes.gsi1.partition({ tenantId }), '', {
    index: 'gsi1',
    projection: 'datamartId, tableIds',
  });
}

/** The permission records on a datamart: of one kind of subject, or of one subject. */
export function listDatamartPermissions(
  tenantId: number,
  datamartId: number,
  subject: PermissionSubject,
  subjectId?: number,
): Promise<StoredPermission[]> {
  return queryAll<StoredPermission>(
    stored.datamart.partition({ tenantId, datamartId }),
    stored.permission.keyPrefix({ subject, subjectId }),
  );
}

/** The records of one kind of subject on a datamart: all, or a page of `limit`. */
export function listDatamartPermissionsPage(
  tenantId: number,
  datamartId: number,
  subject: PermissionSubject,
  limit: number | undefined,
  cursor: string | undefined,
): Promise<Page<StoredPermission>> {
  return queryList<StoredPermission>({
    partition: stored.datamart.partition({ tenantId, datamartId }),
    prefix: stored.permission.keyPrefix({ subject }),
    limit,
    cursor,
  });
}

/**
 * Records in the tenant's permission index: one subject's, every subject's of a kind, or those of
 * the users from `subjectId` to `lastSubjectId`.
 */
export function listIndexedPermissions(
  tenantId: number,
  subject: PermissionSubject,
  subjectId?: number,
  lastSubjectId?: number,
): Promise<StoredPermission[]> {
  const partition = stored.permission.indexes.gsi1.partition({ tenantId });
  if (subjectId === undefined || lastSubjectId === undefined) {
    return queryAll<StoredPermission>(partition, stored.permission.indexes.gsi1.keyPrefix({ subject, subjectId }), {
      index: 'gsi1',
    });
  }
  const from = stored.permission.indexes.gsi1.keyPrefix({ subject, subjectId });
  const to = `${stored.permission.indexes.gsi1.keyPrefix({ subject, subjectId: lastSubjectId })}\uffff`;
  return queryBetween<StoredPermission>(partition, from, to, { index: 'gsi1' });
}

/** What a replace found when it did not finish: a record changed since it was read, or the subject's charge refused (gone, or over its quota). */
export type ReplaceOutcome = { written: true; stored: StoredPermission[] } | { written: false; refused: 'records' | 'subject' };

/**
 * Makes a subject's records on a datamart exactly `records` (one per table): written, and the ones
 * on other tables (`existing`, read before) deleted, each only while it is as read, with the change
 * of their charges to the subject's quota (`ledger.charge`, which also fails when the subject is
 * gone): in one commit when they fit in one, else in commits of up to 100 items, those that free
 * charge first (a retry of the same request converges). Returns the records as stored.
 */
export async function replacePermissionRecords(
  tenantId: number,
  datamartId: number,
  subject: PermissionSubject,
  subjectId: number,
  records: readonly PermissionRecord[],
  existing: readonly StoredPermission[],
  ledger: PermissionLedger,
): Promise<ReplaceOutcome> {
  const kept = new Set(records.map((record) => record.tableId));
  const before = new Map(existing.map((record) => [record.tableId, record]));
  const asStored: StoredPermission[] = records.map((record) => {
    const fields = {
      tableId: record.tableId,
      allowed: record.allowed,
      allow_export: record.allow_export,
      expires_in: record.expires_in,
      hidden_columns: [...new Set(record.hidden_columns)],
      filters: record.filters.map(({ column, operator, value }) => ({ column, operator, value })),
    };
    const facets = { tenantId, datamartId, subject, subjectId, tableId: record.tableId };
    return {
      ...stored.permission.key(facets),
      ...stored.permission.indexEntry(facets),
      tenantId,
      datamartId,
      subject,
      subjectId,
      ...fields,
      charge: permissionCharge(datamartId, fields),
    };
  });
  const writes = [
    ...existing
      .filter((record) => !kept.has(record.tableId))
      .map((record) => ({
        item: { Delete: { TableName: tableName(), Key: { pk: record.pk, sk: record.sk }, ...asRead(record) } },
        delta: -record.charge,
      })),
    ...asStored.map((record) => {
      const old = before.get(record.tableId);
      return {
        item: { Put: { TableName: tableName(), Item: record, ...asRead(old) } },
        delta: record.charge - (old?.charge ?? 0),
      };
    }),
  ].sort((a, b) => a.delta - b.delta);
  const perCommit = maxTransactItems - ledger.charge(subject, subjectId, 0).length;
  for (let start = 0; start < writes.length; start += perCommit) {
    const chunk = writes.slice(start, start + perCommit);
    const delta = chunk.reduce((sum, write) => sum + write.delta, 0);
    const tx = transaction<'record' | 'charge'>();
    for (const write of chunk) tx.add('record', write.item);
    const outcome = await tx.add('charge', ...ledger.charge(subject, subjectId, delta)).commit();
    if (!outcome.written) return { written: false, refused: outcome.failed.has('record') ? 'records' : 'subject' };
  }
  return { written: true, stored: asStored };
}

/** Each record of a sweep's commit by its own name: the ones gone or changed since are left out of the next. */
const recordName = (record: StoredPermission) => nameByKey('record', record);

/** Charged records per commit, beside what gives their charges back. */
const recordsPerRelease = maxTransactItems - 3;

/**
 * Deletes permission records and gives their charges back (`ledger.release`), a commit of up to 97
 * records of one subject at a time, each record only while it is as read: two sweeps that meet on a
 * record (a user's and a datamart's) give it back once. A record gone or changed since is left out
 * (whoever did it accounted for it) and the rest go again; a user who is gone gets nothing back
 * (their charges went with them).
 */
async function deleteRecords(records: readonly StoredPermission[], ledger: PermissionLedger): Promise<void> {
  const bySubject = new Map<string, StoredPermission[]>();
  for (const record of records) {
    const key = `${record.subject}:${record.subjectId}`;
    bySubject.set(key, [...(bySubject.get(key) ?? []), record]);
  }
  for (const subjectRecords of bySubject.values()) {
    for (let start = 0; start < subjectRecords.length; start += recordsPerRelease) {
      let pending = subjectRecords.slice(start, start + recordsPerRelease);
      let giveBack = true;
      while (pending.length > 0) {
        const tx = transaction<ReturnType<typeof recordName> | 'release'>();
        for (const record of pending) {
          tx.add(recordName(record), {
            Delete: { TableName: tableName(), Key: { pk: record.pk, sk: record.sk }, ...asRead(record) },
          });
        }
        const { subject, subjectId } = pending[0] as StoredPermission;
        const delta = -pending.reduce((sum, record) => sum + record.charge, 0);
        if (giveBack) tx.add('release', ...ledger.release(subject, subjectId, delta));
        const outcome = await tx.commit();
        if (outcome.written) break;
        const { failed } = outcome;
        if (failed.has('release')) giveBack = false;
        pending = pending.filter((record) => !failed.has(recordName(record)));
      }
    }
  }
}

/** Deletes every permission record of a subject, on every datamart, giving their charges back. */
export async function deleteSubjectRecords(
  tenantId: number,
  subject: PermissionSubject,
  subjectId: number,
  ledger: PermissionLedger,
): Promise<void> {
  await deleteRecords(await listIndexedPermissions(tenantId, subject, subjectId), ledger);
}

/** A permission record as an earlier version stored it: never charged to its subject's quota. */
export type UnchargedPermission = Omit<StoredPermission, 'charge'>;

/**
 * Migration 6 (migrations/permission-records-charged.ts): gives a record an earlier version stored
 * its `charge`, and charges its subject the same (`subjectCharge`, which fails when the subject is
 * gone), in one commit, only while the record is as read: still uncharged, with the hidden columns
 * and filters its charge measures. A record changed or deleted meanwhile was accounted for by
 * whoever did it; a record whose subject is gone is deleted instead (while still as read), as the
 * subject's sweep would, with nothing to give back.
 */
export async function chargeStoredRecord(
  record: UnchargedPermission,
  charge: number,
  subjectCharge: readonly TransactItem[],
): Promise<void> {
  const key = { pk: record.pk, sk: record.sk };
  const asRead = {
    ConditionExpression:
      'attribute_exists(pk) AND attribute_not_exists(charge) AND hidden_columns = :hidden AND filters = :filters',
    ExpressionAttributeValues: { ':hidden': record.hidden_columns, ':filters': record.filters },
  };
  const outcome = await transaction<'record' | 'subject'>()
    .add('record', {
      Update: {
        TableName: tableName(),
        Key: key,
        UpdateExpression: 'SET charge = :charge',
        ConditionExpression: asRead.ConditionExpression,
        ExpressionAttributeValues: { ...asRead.ExpressionAttributeValues, ':charge': charge },
      },
    })
    .add('subject', ...subjectCharge)
    .commit();
  if (outcome.written || outcome.failed.has('record')) return;
  await transaction<'record'>()
    .add('record', { Delete: { TableName: tableName(), Key: key, ...asRead } })
    .commit();
}
