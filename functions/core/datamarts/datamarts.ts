import { GetCommand, PutCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import type { CreateDatamartBody } from '../api/validators/create-datamart.cjs';
import type { UpdateDatamartBody } from '../api/validators/update-datamart.cjs';
import type { UserRecord } from '../directory/directory-repository.ts';
import { badRequest, type FieldError, notFound } from '../errors.ts';
import {
  allocateIds,
  db,
  deleteAll,
  getAll,
  type Page,
  putAll,
  queryAll,
  queryPage,
  tableName,
  writeIf,
} from '../store/dynamo.ts';
import { keys } from '../store/keys.ts';
import { loadResourcesOfType, type StoredOf } from '../templates/tenant-resources.ts';

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

export const datamartNotFound = () => notFound('Datamart not found');

type StructureItem = { sk: string; tableId?: number; userId?: number } & Partial<DatamartRecord>;

function structureOf(items: readonly StructureItem[]): DatamartStructure | undefined {
  const record = items.find((item) => item.sk === 'S#DM') as DatamartRecord | undefined;
  if (!record) return undefined;
  return {
    record,
    tableIds: items.filter((item) => item.sk.startsWith('S#TABLE#')).map((item) => item.tableId as number),
    ownerIds: items.filter((item) => item.sk.startsWith('S#OWNER#')).map((item) => item.userId as number),
  };
}

export async function loadStructure(tenantId: number, datamartId: number): Promise<DatamartStructure> {
  const items = await queryAll<StructureItem>(keys.datamartPartition(tenantId, datamartId), keys.datamartStructurePrefix);
  const structure = structureOf(items);
  if (!structure) throw datamartNotFound();
  return structure;
}

/** Tables and users must be the tenant's: a 400 names every id that is not. */
async function checkReferences(tenantId: number, input: UpdateDatamartBody) {
  const [tables, users] = await Promise.all([
    loadResourcesOfType(tenantId, 'table'),
    getAll<UserRecord>((input.owners ?? []).map((userId) => keys.user(tenantId, userId))),
  ]);
  const tableIds = new Set(tables.map((table) => table.id));
  const userIds = new Set(users.map((user) => user.userId));
  const errors: FieldError[] = [
    ...(input.tables ?? []).flatMap((id, index) =>
      tableIds.has(id)
        ? []
        : [{ location: 'body' as const, pointer: `/tables/${index}`, message: `${id} is not a table of this tenant` }],
    ),
    ...(input.owners ?? []).flatMap((id, index) =>
      userIds.has(id)
        ? []
        : [{ location: 'body' as const, pointer: `/owners/${index}`, message: `${id} is not a user of this tenant` }],
    ),
  ];
  const [first] = errors;
  if (first) throw badRequest(`Invalid datamart: ${first.pointer} ${first.message}`, errors, 'invalid_references');
}

const tableItem = (tenantId: number, datamartId: number, tableId: number) => ({
  ...keys.datamartTable(tenantId, datamartId, tableId),
  tableId,
});
const ownerItem = (tenantId: number, datamartId: number, userId: number) => ({
  ...keys.datamartOwner(tenantId, datamartId, userId),
  userId,
});

/**
 * POST /tenant/datamart. Tables and owners are written first and the record last: a datamart
 * exists (is listed, can be read) only once complete.
 */
export async function createDatamart(tenantId: number, input: CreateDatamartBody): Promise<DatamartStructure> {
  await checkReferences(tenantId, input);
  const [datamartId] = (await allocateIds(keys.tenantCounter(tenantId, 'datamart'), 1)) as [number];
  const now = new Date().toISOString();
  const record: DatamartRecord = { datamartId, tenantId, nome: input.nome, createdAt: now, updatedAt: now };
  await putAll([
    ...unique(input.tables).map((tableId) => tableItem(tenantId, datamartId, tableId)),
    ...unique(input.owners).map((userId) => ownerItem(tenantId, datamartId, userId)),
  ]);
  await db().send(
    new PutCommand({
      TableName: tableName(),
      Item: { ...record, ...keys.datamart(tenantId, datamartId), ...keys.datamartsIndex(tenantId, datamartId) },
      ConditionExpression: 'attribute_not_exists(pk)',
    }),
  );
  return { record, tableIds: unique(input.tables), ownerIds: unique(input.owners) };
}

const unique = (ids: readonly number[]) => [...new Set(ids)];

/**
 * PATCH /tenant/datamart/{id}: a new name, table list or owner list. A table taken out takes its
 * permission records on this datamart with it.
 */
export async function updateDatamart(
  tenantId: number,
  datamartId: number,
  changes: UpdateDatamartBody,
): Promise<DatamartStructure> {
  const current = await loadStructure(tenantId, datamartId);
  await checkReferences(tenantId, changes);
  const tables = changes.tables === undefined ? current.tableIds : unique(changes.tables);
  const owners = changes.owners === undefined ? current.ownerIds : unique(changes.owners);
  const removedTables = current.tableIds.filter((id) => !tables.includes(id));
  const removedOwners = current.ownerIds.filter((id) => !owners.includes(id));
  await putAll([
    ...tables.filter((id) => !current.tableIds.includes(id)).map((tableId) => tableItem(tenantId, datamartId, tableId)),
    ...owners.filter((id) => !current.ownerIds.includes(id)).map((userId) => ownerItem(tenantId, datamartId, userId)),
  ]);
  const permissions =
    removedTables.length === 0
      ? []
      : (
          await queryAll<{ pk: string; sk: string; tableId: number }>(
            keys.datamartPartition(tenantId, datamartId),
            keys.permissionsPrefix(),
          )
        ).filter((permission) => removedTables.includes(permission.tableId));
  await deleteAll([
    ...removedTables.map((tableId) => keys.datamartTable(tenantId, datamartId, tableId)),
    ...removedOwners.map((userId) => keys.datamartOwner(tenantId, datamartId, userId)),
    ...permissions,
  ]);
  const record = { ...current.record, nome: changes.nome ?? current.record.nome, updatedAt: new Date().toISOString() };
  const written = await writeIf(() =>
    db().send(
      new UpdateCommand({
        TableName: tableName(),
        Key: keys.datamart(tenantId, datamartId),
        UpdateExpression: 'SET nome = :nome, updatedAt = :now',
        ConditionExpression: 'attribute_exists(pk)',
        ExpressionAttributeValues: { ':nome': record.nome, ':now': record.updatedAt },
      }),
    ),
  );
  if (!written) throw datamartNotFound();
  return { record, tableIds: tables, ownerIds: owners };
}

/** DELETE /tenant/datamart/{id}: the record goes first (the datamart is gone at once), then the rest of its collection. */
export async function deleteDatamart(tenantId: number, datamartId: number): Promise<void> {
  const existing = await db().send(
    new GetCommand({ TableName: tableName(), Key: keys.datamart(tenantId, datamartId), ConsistentRead: true }),
  );
  if (!existing.Item) throw datamartNotFound();
  await deleteAll([keys.datamart(tenantId, datamartId)]);
  await deleteAll(
    await queryAll<{ pk: string; sk: string }>(keys.datamartPartition(tenantId, datamartId), '', { projection: 'pk, sk' }),
  );
}

/** Spec 2.3, exactly: `id, nome, dm_tables:[{tableId, table:{id, nome, columns}}], owners:[{userId, user:{id, nome, login}}]`. */
export function describeDatamart(
  structure: DatamartStructure,
  tables: ReadonlyMap<number, StoredOf<'table'>>,
  users: ReadonlyMap<number, UserRecord>,
) {
  return {
    id: structure.record.datamartId,
    nome: structure.record.nome,
    dm_tables: structure.tableIds.flatMap((tableId) => {
      const table = tables.get(tableId);
      return table
        ? [
            {
              tableId,
              table: {
                id: table.id,
                nome: table.nome,
                columns: table.columns.map(({ id, column_name, data_type, label }) => ({ id, column_name, data_type, label })),
              },
            },
          ]
        : [];
    }),
    owners: structure.ownerIds.flatMap((userId) => {
      const user = users.get(userId);
      return user ? [{ userId, user: { id: user.userId, nome: user.nome, login: user.login } }] : [];
    }),
  };
}

/** What describing datamarts needs besides their structure: the tenant's tables and the owners. */
export async function describeContext(tenantId: number, structures: readonly DatamartStructure[]) {
  const ownerIds = unique(structures.flatMap((structure) => structure.ownerIds));
  const [tables, users] = await Promise.all([
    loadResourcesOfType(tenantId, 'table'),
    getAll<UserRecord>(ownerIds.map((userId) => keys.user(tenantId, userId))),
  ]);
  return { tables: new Map(tables.map((table) => [table.id, table])), users: new Map(users.map((user) => [user.userId, user])) };
}

/**
 * GET /tenant/datamart (spec 4.7), a page at a time: one index query, one query per datamart of the
 * page (in parallel), one query for the tenant's tables, one batch read of the owners.
 */
export async function listDatamarts(
  tenantId: number,
  limit: number,
  cursor: string | undefined,
): Promise<Page<ReturnType<typeof describeDatamart>>> {
  const page = await queryPage<DatamartRecord>({
    index: 'gsi1',
    partition: keys.datamartsIndex(tenantId, 0).gsi1pk,
    limit,
    cursor,
  });
  const structures = (
    await Promise.all(
      page.items.map(async (record) =>
        structureOf(
          await queryAll<StructureItem>(keys.datamartPartition(tenantId, record.datamartId), keys.datamartStructurePrefix),
        ),
      ),
    )
  ).filter((structure): structure is DatamartStructure => structure !== undefined);
  const { tables, users } = await describeContext(tenantId, structures);
  return { items: structures.map((structure) => describeDatamart(structure, tables, users)), nextCursor: page.nextCursor };
}

export async function describeOneDatamart(tenantId: number, datamartId: number) {
  const structure = await loadStructure(tenantId, datamartId);
  const { tables, users } = await describeContext(tenantId, [structure]);
  return describeDatamart(structure, tables, users);
}
