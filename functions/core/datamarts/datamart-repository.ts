import {
  deleteAll,
  getAll,
  nextTenantId,
  type Page,
  queryAll,
  queryPage,
  replaceItems,
  tableName,
  transact,
  type TransactItem,
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
  tenantId: number;
  datamartId: number;
  subject: PermissionSubject;
  subjectId: number;
}

type StructureItem = { sk: string; tableId?: number; userId?: number } & Partial<DatamartRecord>;

/**
 * The datamart's structure from its record; `undefined` when there is none. A record written by
 * an earlier version has no lists: its tables and owners are items of its collection (`S#TABLE#`,
 * `S#OWNER#`), which the same Query returns.
 */
export async function findStructure(tenantId: number, datamartId: number): Promise<DatamartStructure | undefined> {
  const items = await queryAll<StructureItem>(keys.datamartPartition(tenantId, datamartId), keys.datamartStructurePrefix);
  const record = items.find((item) => item.sk === 'S#DM') as DatamartRecord | undefined;
  if (!record) return undefined;
  return {
    record,
    tableIds: record.tableIds ?? items.filter((item) => item.sk.startsWith('S#TABLE#')).map((item) => item.tableId as number),
    ownerIds: record.ownerIds ?? items.filter((item) => item.sk.startsWith('S#OWNER#')).map((item) => item.userId as number),
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

/** Writes a new datamart (its record holds its tables and owners), with `alongside`, in one commit. */
export async function insertDatamart(record: DatamartRecord, alongside: readonly TransactItem[]): Promise<void> {
  const written = await transact([
    { Put: { TableName: tableName(), Item: recordItem(record), ConditionExpression: 'attribute_not_exists(pk)' } },
    ...alongside,
  ]);
  if (!written) throw new Error(`Datamart ${record.datamartId} of tenant ${record.tenantId} already exists`);
}

/**
 * Replaces the datamart's record with `next` if it is still as read (`updatedAt`), with
 * `alongside`, in one commit; `false` when it changed or is gone.
 */
export function replaceDatamart(
  current: DatamartRecord,
  next: DatamartRecord,
  alongside: readonly TransactItem[],
): Promise<boolean> {
  return transact([
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
export function deleteDatamartRecord(tenantId: number, datamartId: number, alongside: readonly TransactItem[]) {
  return transact([
    {
      Delete: {
        TableName: tableName(),
        Key: keys.datamart(tenantId, datamartId),
        ConditionExpression: 'attribute_exists(pk)',
      },
    },
    ...alongside,
  ]);
}

/**
 * Deletes what in the datamart's collection its record no longer accounts for: everything when
 * the record is gone; otherwise the structure items of an earlier version once the record holds
 * the lists, and the permission records on tables that are no longer in it.
 */
export async function deleteLeftovers(tenantId: number, datamartId: number): Promise<void> {
  const items = await queryAll<StructureItem & { pk: string }>(keys.datamartPartition(tenantId, datamartId), '', {
    projection: 'pk, sk, tableId, tableIds',
  });
  const record = items.find((item) => item.sk === 'S#DM');
  const tables = record?.tableIds && new Set(record.tableIds);
  const unaccounted = (item: StructureItem) =>
    !record ||
    (tables !== undefined &&
      (item.sk.startsWith('S#TABLE#') ||
        item.sk.startsWith('S#OWNER#') ||
        (item.sk.startsWith('P#') && !tables.has(item.tableId as number))));
  await deleteAll(items.filter(unaccounted).map(({ pk, sk }) => ({ pk, sk })));
}

/** Several of the tenant's datamart records by id (batch reads); missing ones are left out. */
export function findDatamartRecords(tenantId: number, datamartIds: readonly number[]): Promise<DatamartRecord[]> {
  return getAll<DatamartRecord>(datamartIds.map((datamartId) => keys.datamart(tenantId, datamartId)));
}

/** A page of the tenant's datamart records, through the index listing them. */
export function listDatamartRecordsPage(
  tenantId: number,
  limit: number,
  cursor: string | undefined,
): Promise<Page<DatamartRecord>> {
  return queryPage<DatamartRecord>({
    index: 'gsi1',
    partition: keys.datamartsIndex(tenantId, 0).gsi1pk,
    limit,
    cursor,
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

/** A subject's records on every datamart (one index query). */
export function listSubjectPermissions(
  tenantId: number,
  subject: PermissionSubject,
  subjectId: number,
): Promise<StoredPermission[]> {
  return queryAll<StoredPermission>(keys.subjectPermissionsIndex(tenantId, subject, subjectId), '', { index: 'gsi1' });
}

/**
 * Makes a subject's records on a datamart exactly `records` (one per table): written, and the ones
 * on other tables (`existing`, read before) deleted, in one commit when they fit in one.
 */
export async function replacePermissionRecords(
  tenantId: number,
  datamartId: number,
  subject: PermissionSubject,
  subjectId: number,
  records: readonly PermissionRecord[],
  existing: readonly StoredPermission[],
): Promise<void> {
  const kept = new Set(records.map((record) => record.tableId));
  await replaceItems(
    records.map((record) => ({
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
    })),
    existing.filter((record) => !kept.has(record.tableId)).map(({ pk, sk }) => ({ pk, sk })),
  );
}

/** Deletes every permission record of a subject, on every datamart, and for a user every datamart ownership too. */
export async function deleteSubjectRecords(tenantId: number, subject: PermissionSubject, subjectId: number): Promise<void> {
  const records = await listSubjectPermissions(tenantId, subject, subjectId);
  const owned =
    subject === 'user'
      ? await queryAll<{ pk: string; sk: string }>(keys.ownerIndex(tenantId, subjectId), '', { index: 'gsi1' })
      : [];
  await deleteAll([...records, ...owned].map(({ pk, sk }) => ({ pk, sk })));
}
