import { UpdateCommand } from '@aws-sdk/lib-dynamodb';
import {
  db,
  deleteAll,
  nextTenantId,
  type Page,
  queryAll,
  queryBetween,
  queryList,
  replaceItems,
  tableName,
  transactOrReasons,
  type TransactItem,
  writeIf,
} from '#functions/core/store/dynamo.ts';
import { keys, type PermissionSubject } from '#functions/core/store/keys.ts';
import type { PermissionRecord } from './effective-permissions.ts';

export interface DatamartRecord {
  datamartId: number;
  tenantId: number;
  nome: string;
  /** Its tables and owners, in order: the record is the whole datamart, written in one commit. */
  tableIds?: number[];
  ownerIds?: number[];
  /**
   * Everything of it is in the tenant-wide indexes: its owners in the owners index, its permission
   * records in the permission index. Set on creation; a datamart of an earlier version gets it once
   * its next change has moved them there (until then its readers take its records from its collection).
   */
  tenantIndexed?: true;
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
}

type CollectionItem = { sk: string; tableId?: number; userId?: number } & Partial<DatamartRecord>;

/**
 * The datamart's structure from the items of its collection; `undefined` without a record. A
 * record written by an earlier version has no lists: its tables and owners are items of its
 * collection (`S#TABLE#`, `S#OWNER#`).
 */
function structureFrom(items: readonly CollectionItem[]): DatamartStructure | undefined {
  const record = items.find((item) => item.sk === keys.datamart(0, 0).sk) as DatamartRecord | undefined;
  if (!record) return undefined;
  return {
    record,
    tableIds: record.tableIds ?? items.filter((item) => item.sk.startsWith('S#TABLE#')).map((item) => item.tableId as number),
    ownerIds: record.ownerIds ?? items.filter((item) => item.sk.startsWith('S#OWNER#')).map((item) => item.userId as number),
  };
}

/** The structure of a record that holds its lists (one of this version), without reading its collection. */
export const holdsItsLists = (record: DatamartRecord) => record.tableIds !== undefined && record.ownerIds !== undefined;

/** The datamart's record and structure (one Query of its `S#` items); `undefined` when there is none. */
export async function findStructure(tenantId: number, datamartId: number): Promise<DatamartStructure | undefined> {
  return structureFrom(
    await queryAll<CollectionItem>(keys.datamartPartition(tenantId, datamartId), keys.datamartStructurePrefix),
  );
}

/** The whole collection of a datamart: its structure and every permission record on it (one Query). */
export async function findCollection(
  tenantId: number,
  datamartId: number,
): Promise<{ structure: DatamartStructure | undefined; permissions: StoredPermission[] }> {
  const items = await queryAll<CollectionItem & StoredPermission>(keys.datamartPartition(tenantId, datamartId), '');
  return {
    structure: structureFrom(items),
    permissions: items.filter((item) => item.sk.startsWith(keys.permissionsPrefix())),
  };
}

export function allocateDatamartId(tenantId: number): Promise<number> {
  return nextTenantId(tenantId, 'datamart');
}

const recordItem = (record: DatamartRecord) => ({
  ...record,
  ...keys.datamart(record.tenantId, record.datamartId),
  ...keys.datamartsIndex(record.tenantId, record.datamartId),
});

/** What a datamart's write found: written, or the record or an owner (`alongside`) not as read. */
export type DatamartWrite = 'written' | 'changed' | 'condition_alongside';

async function commit(items: readonly TransactItem[]): Promise<DatamartWrite> {
  const outcome = await transactOrReasons(items);
  if (outcome.written) return 'written';
  return outcome.failedConditions.includes(0) ? 'changed' : 'condition_alongside';
}

/**
 * Writes a new datamart (its record holds its tables and owners), with `alongside`, in one commit;
 * `condition_alongside` when a condition of `alongside` failed.
 */
export async function insertDatamart(record: DatamartRecord, alongside: readonly TransactItem[]): Promise<DatamartWrite> {
  const outcome = await commit([
    { Put: { TableName: tableName(), Item: recordItem(record), ConditionExpression: 'attribute_not_exists(pk)' } },
    ...alongside,
  ]);
  if (outcome === 'changed') throw new Error(`Datamart ${record.datamartId} of tenant ${record.tenantId} already exists`);
  return outcome;
}

/**
 * Replaces the datamart's record with `next` if it is still as read (`updatedAt`), with
 * `alongside`, in one commit; `changed` when it changed or is gone.
 */
export function replaceDatamart(
  current: DatamartRecord,
  next: DatamartRecord,
  alongside: readonly TransactItem[],
): Promise<DatamartWrite> {
  return commit([
    {
      Put: {
        TableName: tableName(),
        Item: recordItem(next),
        ConditionExpression: 'updatedAt = :seen',
        ExpressionAttributeValues: { ':seen': current.updatedAt },
      },
    },
    ...alongside,
  ]);
}

/** Deletes the datamart's record (it is gone at once), with `alongside`; `false` when it is gone already. */
export async function deleteDatamartRecord(tenantId: number, datamartId: number, alongside: readonly TransactItem[]) {
  const outcome = await commit([
    {
      Delete: {
        TableName: tableName(),
        Key: keys.datamart(tenantId, datamartId),
        ConditionExpression: 'attribute_exists(pk)',
      },
    },
    ...alongside,
  ]);
  return outcome === 'written';
}

/**
 * Brings the datamart's collection in line with its record: deletes everything when the record
 * is gone; otherwise the structure items of an earlier version once the record holds the lists,
 * and the permission records on tables that are no longer in it; then moves the records an earlier
 * version indexed by subject into the tenant's permission index and marks the record `tenantIndexed`.
 * Each step is the same when repeated, so a retry or the sweeper finishes it.
 */
export async function tidyCollection(tenantId: number, datamartId: number): Promise<void> {
  const partition = keys.datamartPartition(tenantId, datamartId);
  const items = await queryAll<CollectionItem & StoredPermission>(partition, '');
  const record = items.find((item) => item.sk === keys.datamart(tenantId, datamartId).sk);
  const tables = record?.tableIds && new Set(record.tableIds);
  const isPermission = (item: CollectionItem) => item.sk.startsWith(keys.permissionsPrefix());
  const unaccounted = (item: CollectionItem) =>
    !record ||
    (tables !== undefined &&
      (item.sk.startsWith('S#TABLE#') ||
        item.sk.startsWith('S#OWNER#') ||
        (isPermission(item) && !tables.has(item.tableId as number))));
  await deleteAll(items.filter(unaccounted).map(({ pk, sk }) => ({ pk, sk })));
  if (!record || record.tenantIndexed || !tables) return;
  const indexPartition = keys.tenantPermissionsPartition(tenantId);
  const unmoved = items.filter((item) => isPermission(item) && !unaccounted(item) && item.gsi1pk !== indexPartition);
  // One update per record, only of its index keys, and only while it exists: a record replaced or
  // deleted meanwhile keeps what that write gave it.
  await Promise.all(
    unmoved.map((item) => {
      const entry = keys.permissionIndex(tenantId, datamartId, item.subject, item.subjectId, item.tableId);
      return writeIf(() =>
        db().send(
          new UpdateCommand({
            TableName: tableName(),
            Key: { pk: item.pk, sk: item.sk },
            UpdateExpression: 'SET gsi1pk = :pk, gsi1sk = :sk',
            ConditionExpression: 'attribute_exists(pk)',
            ExpressionAttributeValues: { ':pk': entry.gsi1pk, ':sk': entry.gsi1sk },
          }),
        ),
      );
    }),
  );
  await writeIf(() =>
    db().send(
      new UpdateCommand({
        TableName: tableName(),
        Key: keys.datamart(tenantId, datamartId),
        UpdateExpression: 'SET tenantIndexed = :true',
        ConditionExpression: 'attribute_exists(pk)',
        ExpressionAttributeValues: { ':true': true },
      }),
    ),
  );
}

/** The tenant's datamart records through the index listing them: all, or a page of `limit` (the records hold their lists). */
export function listDatamartRecords(
  tenantId: number,
  limit: number | undefined,
  cursor: string | undefined,
): Promise<Page<DatamartRecord>> {
  return queryList<DatamartRecord>({ index: 'gsi1', partition: keys.datamartsIndex(tenantId, 0).gsi1pk, limit, cursor });
}

/** Every datamart of the tenant: which tables each has, and whether its records are in the permission index. */
export function listDatamartTables(
  tenantId: number,
): Promise<Array<Pick<DatamartRecord, 'datamartId' | 'tableIds' | 'tenantIndexed'>>> {
  return queryAll(keys.datamartsIndex(tenantId, 0).gsi1pk, '', {
    index: 'gsi1',
    projection: 'datamartId, tableIds, tenantIndexed',
  });
}

/** The permission records on a datamart: of one kind of subject, or of one subject. */
export function listDatamartPermissions(
  tenantId: number,
  datamartId: number,
  subject: PermissionSubject,
  subjectId?: number,
): Promise<StoredPermission[]> {
  return queryAll<StoredPermission>(keys.datamartPartition(tenantId, datamartId), keys.permissionsPrefix(subject, subjectId));
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
    partition: keys.datamartPartition(tenantId, datamartId),
    prefix: keys.permissionsPrefix(subject),
    limit,
    cursor,
  });
}

/**
 * Records in the tenant's permission index: one subject's, every subject's of a kind, or those of
 * the users from `subjectId` to `lastSubjectId`. Records of a datamart not `tenantIndexed` may be missing.
 */
export function listIndexedPermissions(
  tenantId: number,
  subject: PermissionSubject,
  subjectId?: number,
  lastSubjectId?: number,
): Promise<StoredPermission[]> {
  const partition = keys.tenantPermissionsPartition(tenantId);
  if (subjectId === undefined || lastSubjectId === undefined) {
    return queryAll<StoredPermission>(partition, keys.tenantPermissionsPrefix(subject, subjectId), { index: 'gsi1' });
  }
  const from = keys.tenantPermissionsPrefix(subject, subjectId);
  const to = `${keys.tenantPermissionsPrefix(subject, lastSubjectId)}\uffff`;
  return queryBetween<StoredPermission>(partition, from, to, { index: 'gsi1' });
}

/**
 * Every record of a subject, on every datamart: those in the tenant's permission index and those an
 * earlier version indexed by subject (two index queries, in parallel).
 */
async function listSubjectPermissions(
  tenantId: number,
  subject: PermissionSubject,
  subjectId: number,
): Promise<StoredPermission[]> {
  const [indexed, legacy] = await Promise.all([
    listIndexedPermissions(tenantId, subject, subjectId),
    queryAll<StoredPermission>(keys.legacySubjectPermissionsIndex(tenantId, subject, subjectId), '', { index: 'gsi1' }),
  ]);
  return [...indexed, ...legacy];
}

/**
 * Makes a subject's records on a datamart exactly `records` (one per table): written, and the ones
 * on other tables (`existing`, read before) deleted, in one commit when they fit in one. Returns
 * the records as stored.
 */
export async function replacePermissionRecords(
  tenantId: number,
  datamartId: number,
  subject: PermissionSubject,
  subjectId: number,
  records: readonly PermissionRecord[],
  existing: readonly StoredPermission[],
): Promise<StoredPermission[]> {
  const kept = new Set(records.map((record) => record.tableId));
  const stored = records.map((record) => ({
    ...keys.permission(tenantId, datamartId, subject, subjectId, record.tableId),
    tenantId,
    datamartId,
    subject,
    subjectId,
    tableId: record.tableId,
    allowed: record.allowed,
    allow_export: record.allow_export,
    expires_in: record.expires_in,
    hidden_columns: [...new Set(record.hidden_columns)],
    filters: record.filters.map(({ column, operator, value }) => ({ column, operator, value })),
  }));
  await replaceItems(
    stored,
    existing.filter((record) => !kept.has(record.tableId)).map(({ pk, sk }) => ({ pk, sk })),
  );
  return stored;
}

/** Deletes every permission record of a subject, on every datamart, and for a user every datamart ownership an earlier version kept as items. */
export async function deleteSubjectRecords(tenantId: number, subject: PermissionSubject, subjectId: number): Promise<void> {
  const [records, owned] = await Promise.all([
    listSubjectPermissions(tenantId, subject, subjectId),
    subject === 'user'
      ? queryAll<{ pk: string; sk: string }>(keys.ownerIndex(tenantId, subjectId), '', { index: 'gsi1' })
      : Promise.resolve([]),
  ]);
  await deleteAll([...records, ...owned].map(({ pk, sk }) => ({ pk, sk })));
}
