import { PutCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import {
  db,
  deleteAll,
  getItem,
  nextTenantId,
  type Page,
  putAll,
  queryAll,
  queryPage,
  tableName,
  writeIf,
} from '#functions/core/store/dynamo.ts';
import { keys, type PermissionSubject } from '#functions/core/store/keys.ts';
import type { PermissionRecord } from './effective-permissions.ts';

export interface DatamartRecord {
  datamartId: number;
  tenantId: number;
  nome: string;
  createdAt: string;
  updatedAt: string;
}

/** A datamart's record and structure (tables, owners), from one Query of its item collection. */
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

/** The datamart's record, tables and owners; `undefined` when it has no record (absent, or not complete yet). */
export async function findStructure(tenantId: number, datamartId: number): Promise<DatamartStructure | undefined> {
  const items = await queryAll<StructureItem>(keys.datamartPartition(tenantId, datamartId), keys.datamartStructurePrefix);
  const record = items.find((item) => item.sk === 'S#DM') as DatamartRecord | undefined;
  if (!record) return undefined;
  return {
    record,
    tableIds: items.filter((item) => item.sk.startsWith('S#TABLE#')).map((item) => item.tableId as number),
    ownerIds: items.filter((item) => item.sk.startsWith('S#OWNER#')).map((item) => item.userId as number),
  };
}

export function allocateDatamartId(tenantId: number): Promise<number> {
  return nextTenantId(tenantId, 'datamart');
}

/** Adds tables and owners to a datamart's collection. */
export async function putStructure(
  tenantId: number,
  datamartId: number,
  tableIds: readonly number[],
  ownerIds: readonly number[],
): Promise<void> {
  await putAll([
    ...tableIds.map((tableId) => ({ ...keys.datamartTable(tenantId, datamartId, tableId), tableId })),
    ...ownerIds.map((userId) => ({ ...keys.datamartOwner(tenantId, datamartId, userId), userId })),
  ]);
}

/** Takes tables and owners out of a datamart's collection, with every permission record on those tables. */
export async function removeStructure(
  tenantId: number,
  datamartId: number,
  tableIds: readonly number[],
  ownerIds: readonly number[],
): Promise<void> {
  const permissions =
    tableIds.length === 0
      ? []
      : (
          await queryAll<{ pk: string; sk: string; tableId: number }>(
            keys.datamartPartition(tenantId, datamartId),
            keys.permissionsPrefix(),
          )
        ).filter((permission) => tableIds.includes(permission.tableId));
  await deleteAll([
    ...tableIds.map((tableId) => keys.datamartTable(tenantId, datamartId, tableId)),
    ...ownerIds.map((userId) => keys.datamartOwner(tenantId, datamartId, userId)),
    ...permissions,
  ]);
}

/** Writes a new datamart's record (and its entry in the tenant's list). */
export async function insertDatamartRecord(record: DatamartRecord): Promise<void> {
  const { tenantId, datamartId } = record;
  await db().send(
    new PutCommand({
      TableName: tableName(),
      Item: { ...record, ...keys.datamart(tenantId, datamartId), ...keys.datamartsIndex(tenantId, datamartId) },
      ConditionExpression: 'attribute_not_exists(pk)',
    }),
  );
}

/** Sets the name and update time of an existing datamart; `false` when it is gone. */
export function updateDatamartRecord(record: DatamartRecord): Promise<boolean> {
  return writeIf(() =>
    db().send(
      new UpdateCommand({
        TableName: tableName(),
        Key: keys.datamart(record.tenantId, record.datamartId),
        UpdateExpression: 'SET nome = :nome, updatedAt = :now',
        ConditionExpression: 'attribute_exists(pk)',
        ExpressionAttributeValues: { ':nome': record.nome, ':now': record.updatedAt },
      }),
    ),
  );
}

export async function datamartExists(tenantId: number, datamartId: number): Promise<boolean> {
  return (await getItem(keys.datamart(tenantId, datamartId))) !== undefined;
}

/** Deletes the record first (the datamart is gone at once), then the rest of its collection. */
export async function deleteDatamartCollection(tenantId: number, datamartId: number): Promise<void> {
  await deleteAll([keys.datamart(tenantId, datamartId)]);
  await deleteAll(
    await queryAll<{ pk: string; sk: string }>(keys.datamartPartition(tenantId, datamartId), '', { projection: 'pk, sk' }),
  );
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

/** Writes a subject's records on a datamart, one per table (replacing what it had on those tables). */
export async function putPermissions(
  tenantId: number,
  datamartId: number,
  subject: PermissionSubject,
  subjectId: number,
  records: readonly PermissionRecord[],
): Promise<void> {
  await putAll(
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
  );
}

export async function deletePermissions(records: readonly StoredPermission[]): Promise<void> {
  await deleteAll(records);
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
