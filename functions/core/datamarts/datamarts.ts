import type { CreateDatamartBody } from '#functions/core/api/validators/create-datamart.cjs';
import type { UpdateDatamartBody } from '#functions/core/api/validators/update-datamart.cjs';
import { findUsers, type UserRecord } from '#functions/core/directory/directory-repository.ts';
import { badRequest, type FieldError, notFound } from '#functions/core/errors.ts';
import type { Page } from '#functions/core/store/dynamo.ts';
import { loadResourcesOfType } from '#functions/core/templates/template-repository.ts';
import type { StoredOf } from '#functions/core/templates/tenant-resources.ts';
import {
  allocateDatamartId,
  type DatamartRecord,
  type DatamartStructure,
  datamartExists,
  deleteDatamartCollection,
  findStructure,
  insertDatamartRecord,
  listDatamartRecordsPage,
  putStructure,
  removeStructure,
  updateDatamartRecord,
} from './datamart-repository.ts';

export const datamartNotFound = () => notFound('Datamart not found');

export async function loadStructure(tenantId: number, datamartId: number): Promise<DatamartStructure> {
  const structure = await findStructure(tenantId, datamartId);
  if (!structure) throw datamartNotFound();
  return structure;
}

/** Tables and users must be the tenant's: a 400 names every id that is not. */
async function checkReferences(tenantId: number, input: UpdateDatamartBody) {
  const [tables, users] = await Promise.all([loadResourcesOfType(tenantId, 'table'), findUsers(tenantId, input.owners ?? [])]);
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

/**
 * POST /tenant/datamart. Tables and owners are written first and the record last: a datamart
 * exists (is listed, can be read) only once complete.
 */
export async function createDatamart(tenantId: number, input: CreateDatamartBody): Promise<DatamartStructure> {
  await checkReferences(tenantId, input);
  const datamartId = await allocateDatamartId(tenantId);
  const now = new Date().toISOString();
  const record: DatamartRecord = { datamartId, tenantId, nome: input.nome, createdAt: now, updatedAt: now };
  await putStructure(tenantId, datamartId, unique(input.tables), unique(input.owners));
  await insertDatamartRecord(record);
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
  await putStructure(
    tenantId,
    datamartId,
    tables.filter((id) => !current.tableIds.includes(id)),
    owners.filter((id) => !current.ownerIds.includes(id)),
  );
  await removeStructure(tenantId, datamartId, removedTables, removedOwners);
  const record = { ...current.record, nome: changes.nome ?? current.record.nome, updatedAt: new Date().toISOString() };
  const written = await updateDatamartRecord(record);
  if (!written) throw datamartNotFound();
  return { record, tableIds: tables, ownerIds: owners };
}

/** DELETE /tenant/datamart/{id}: the record goes first (the datamart is gone at once), then the rest of its collection. */
export async function deleteDatamart(tenantId: number, datamartId: number): Promise<void> {
  if (!(await datamartExists(tenantId, datamartId))) throw datamartNotFound();
  await deleteDatamartCollection(tenantId, datamartId);
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
  const [tables, users] = await Promise.all([loadResourcesOfType(tenantId, 'table'), findUsers(tenantId, ownerIds)]);
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
  const page = await listDatamartRecordsPage(tenantId, limit, cursor);
  const structures = (await Promise.all(page.items.map((record) => findStructure(tenantId, record.datamartId)))).filter(
    (structure): structure is DatamartStructure => structure !== undefined,
  );
  const { tables, users } = await describeContext(tenantId, structures);
  return { items: structures.map((structure) => describeDatamart(structure, tables, users)), nextCursor: page.nextCursor };
}

export async function describeOneDatamart(tenantId: number, datamartId: number) {
  const structure = await loadStructure(tenantId, datamartId);
  const { tables, users } = await describeContext(tenantId, [structure]);
  return describeDatamart(structure, tables, users);
}
