import type { CreateDatamartBody } from '#functions/core/api/validators/create-datamart.cjs';
import type { UpdateDatamartBody } from '#functions/core/api/validators/update-datamart.cjs';
import { findUsers, type UserRecord } from '#functions/core/directory/directory-repository.ts';
import { badRequest, conflict, type FieldError, notFound } from '#functions/core/errors.ts';
import { deleteFollowUp, recordFollowUp } from '#functions/core/follow-ups/follow-up-repository.ts';
import type { Page } from '#functions/core/store/dynamo.ts';
import { type Resumable, unrecorded } from '#functions/core/store/resumable.ts';
import { loadResourcesOfType } from '#functions/core/templates/template-repository.ts';
import type { StoredOf } from '#functions/core/templates/tenant-resources.ts';
import {
  allocateDatamartId,
  type DatamartRecord,
  type DatamartStructure,
  deleteDatamartRecord,
  deleteLeftovers,
  findStructure,
  insertDatamart,
  listDatamartRecordsPage,
  replaceDatamart,
} from './datamart-repository.ts';

export const datamartNotFound = () => notFound('Datamart not found');

export async function loadStructure(tenantId: number, datamartId: number): Promise<DatamartStructure> {
  const structure = await findStructure(tenantId, datamartId);
  if (!structure) throw datamartNotFound();
  return structure;
}

/**
 * Tables and users must be the tenant's: a 400 names every id that is not. Returns what describing
 * the datamart needs of them.
 */
async function checkReferences(tenantId: number, input: UpdateDatamartBody, currentOwners: readonly number[] = []) {
  const [tables, users] = await Promise.all([
    loadResourcesOfType(tenantId, 'table'),
    findUsers(tenantId, unique([...(input.owners ?? []), ...currentOwners])),
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
  return { tables: new Map(tables.map((table) => [table.id, table])), users: new Map(users.map((user) => [user.userId, user])) };
}

/** A datamart as spec 2.3 shows it. */
export type DatamartView = ReturnType<typeof describeDatamart>;

/**
 * POST /tenant/datamart. The record holds the tables and owners, so the datamart is written in one
 * commit, with the request's answer.
 */
export async function createDatamart(
  tenantId: number,
  input: CreateDatamartBody,
  record: Resumable<DatamartView> = unrecorded(),
): Promise<DatamartView> {
  const context = await checkReferences(tenantId, input);
  const datamartId = await allocateDatamartId(tenantId);
  const now = new Date().toISOString();
  const datamart: DatamartRecord = {
    datamartId,
    tenantId,
    nome: input.nome,
    tableIds: unique(input.tables),
    ownerIds: unique(input.owners),
    createdAt: now,
    updatedAt: now,
  };
  const view = describeDatamart(structureOf(datamart), context.tables, context.users);
  await insertDatamart(datamart, record.finish(view));
  return view;
}

const unique = (ids: readonly number[]) => [...new Set(ids)];
const structureOf = (record: DatamartRecord): DatamartStructure => ({
  record,
  tableIds: record.tableIds ?? [],
  ownerIds: record.ownerIds ?? [],
});

/** The follow-up that deletes what a datamart's record no longer accounts for. */
const tidying = (tenantId: number, datamartId: number) => ({ kind: 'tidy-datamart' as const, tenantId, subjectId: datamartId });

/**
 * PATCH /tenant/datamart/{id}: a new name, table list or owner list, in one commit of the record.
 * The permission records on a table taken out (there may be more than a transaction holds) are
 * ignored by readers from that commit on, and deleted right after it (by the follow-up sweeper, if
 * this request stops first).
 */
export async function updateDatamart(tenantId: number, datamartId: number, changes: UpdateDatamartBody): Promise<DatamartView> {
  const current = await loadStructure(tenantId, datamartId);
  const context = await checkReferences(tenantId, changes, current.ownerIds);
  const next: DatamartRecord = {
    ...current.record,
    nome: changes.nome ?? current.record.nome,
    tableIds: changes.tables === undefined ? current.tableIds : unique(changes.tables),
    ownerIds: changes.owners === undefined ? current.ownerIds : unique(changes.owners),
    updatedAt: new Date().toISOString(),
  };
  // A record of an earlier version (its structure in items) also leaves those items behind.
  const leavesItems = !current.record.tableIds || current.tableIds.some((id) => !next.tableIds?.includes(id));
  const followUps = leavesItems ? [recordFollowUp(tidying(tenantId, datamartId))] : [];
  if (!(await replaceDatamart(current.record, next, followUps))) {
    throw conflict('The datamart changed while this request ran; retry it');
  }
  if (leavesItems) await tidyDatamart(tenantId, datamartId);
  return describeDatamart(structureOf(next), context.tables, context.users);
}

/**
 * DELETE /tenant/datamart/{id}: the record goes (the datamart is gone at once), then the rest of its
 * collection (by the follow-up sweeper, if this request stops first).
 */
export async function deleteDatamart(tenantId: number, datamartId: number): Promise<void> {
  if (!(await deleteDatamartRecord(tenantId, datamartId, [recordFollowUp(tidying(tenantId, datamartId))]))) {
    throw datamartNotFound();
  }
  await tidyDatamart(tenantId, datamartId);
}

/** Deletes what the datamart's record no longer accounts for, then the follow-up that asked for it. */
export async function tidyDatamart(tenantId: number, datamartId: number): Promise<void> {
  await deleteLeftovers(tenantId, datamartId);
  await deleteFollowUp(tidying(tenantId, datamartId));
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

export async function describeOneDatamart(tenantId: number, datamartId: number): Promise<DatamartView> {
  const structure = await loadStructure(tenantId, datamartId);
  const { tables, users } = await describeContext(tenantId, [structure]);
  return describeDatamart(structure, tables, users);
}
