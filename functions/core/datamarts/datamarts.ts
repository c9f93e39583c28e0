import type { CreateDatamartBody } from '#functions/core/api/validators/create-datamart.cjs';
import type { UpdateDatamartBody } from '#functions/core/api/validators/update-datamart.cjs';
import {
  findUsers,
  listDatamartOwners,
  ownersIndexEntries,
  type UserName,
  type UserRecord,
} from '#functions/core/directory/directory-repository.ts';
import { answerBytes } from '#functions/core/api/whole-list.ts';
import { maxDatamartBytes, maxDatamartsPerTenant } from '#functions/core/directory/quotas.ts';
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
  type DatamartWrite,
  deleteDatamartRecord,
  findStructure,
  insertDatamart,
  listDatamartRecords,
  replaceDatamart,
  structureOf,
  tidyCollection,
} from './datamart-repository.ts';
import { permissionLedger } from './ledger.ts';

export const datamartNotFound = () => notFound('Datamart not found', 'datamart_not_found');

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

/**
 * The owners index entries of a datamart's owners that are not in it yet, for the datamart's own
 * commit: a datamart is never listed with an owner the index cannot name.
 */
const ownerEntries = (ownerIds: readonly number[], users: ReadonlyMap<number, UserRecord>) =>
  ownersIndexEntries(ownerIds.flatMap((userId) => users.get(userId) ?? []));

/** A datamart's write as the caller hears of it: done, or a 409 saying what changed while the request ran. */
function requireWritten(outcome: DatamartWrite): void {
  if (outcome === 'changed') throw conflict('The datamart changed while this request ran; retry it', 'concurrent_change');
  // The only other conditions are the owners index entries': an owner was deleted since the check.
  if (outcome === 'condition_alongside')
    throw conflict('An owner of the datamart was deleted while this request ran; retry it', 'concurrent_change');
}

/** A datamart as spec 2.3 shows it. */
export type DatamartView = ReturnType<typeof describeDatamart>;

/**
 * A datamart written must fit in an answer, with room to spare (directory/quotas.ts
 * `maxDatamartBytes`): its tables' columns are most of it. A table a later template apply widens
 * can still take one past it; GET answers that with a 400, never the gateway's 502.
 */
function withinAnswer(view: DatamartView): DatamartView {
  const bytes = answerBytes(view);
  if (bytes > maxDatamartBytes) {
    const message = `The datamart would take ${(bytes / (1024 * 1024)).toFixed(1)} MB in an answer (its tables with their columns, and its owners), more than the ${maxDatamartBytes / (1024 * 1024)} MB a datamart may: fewer tables`;
    throw badRequest(message, [{ location: 'body', pointer: '/tables', message }], 'datamart_too_large');
  }
  return view;
}

/** 409 when the tenant has as many datamarts as it may. */
const datamartLimit = (max: number) => conflict(`A tenant has at most ${max.toLocaleString('en')} datamarts`, 'datamart_limit');

/**
 * POST /tenant/datamart. The record holds the tables and owners, so the datamart is written in one
 * commit, with its owners' entries in the owners index, the request's answer and one more on the
 * tenant's datamart count: at most `max` (`maxDatamartsPerTenant`; tests pass smaller ones), kept
 * by the count's condition whatever runs at the same time.
 */
export async function createDatamart(
  tenantId: number,
  input: CreateDatamartBody,
  record: Resumable<DatamartView> = unrecorded(),
  max = maxDatamartsPerTenant,
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
    tenantIndexed: true,
    createdAt: now,
    updatedAt: now,
  };
  const view = withinAnswer(describeDatamart(structureOf(datamart), context.tables, context.users));
  const outcome = await insertDatamart(
    datamart,
    [...record.finish(view), ...ownerEntries(datamart.ownerIds, context.users)],
    max,
  );
  if (outcome === 'limit') throw datamartLimit(max);
  requireWritten(outcome);
  return view;
}

const unique = (ids: readonly number[]) => [...new Set(ids)];

/** The follow-up that deletes what a datamart's record no longer accounts for (tidyCollection). */
const tidying = (tenantId: number, datamartId: number) => ({
  kind: 'tidy-datamart' as const,
  ownerId: tenantId,
  subjectId: datamartId,
});

/**
 * PATCH /tenant/datamart/{id}: a new name, table list or owner list, in one commit of the record
 * (with its owners' entries in the owners index). The permission records on a table taken out
 * (there may be more than a transaction holds) are ignored by readers from that commit on, and
 * deleted right after it (by the follow-up sweeper, if this request stops first).
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
  const leavesItems = current.tableIds.some((id) => !next.tableIds.includes(id));
  const followUps = leavesItems ? [recordFollowUp(tidying(tenantId, datamartId))] : [];
  const described = describeDatamart(structureOf(next), context.tables, context.users);
  // Checked when its tables change: a rename of a datamart a template widened since is no refusal.
  const view = changes.tables === undefined ? described : withinAnswer(described);
  requireWritten(await replaceDatamart(current.record, next, [...followUps, ...ownerEntries(next.ownerIds, context.users)]));
  if (leavesItems) await tidyDatamart(tenantId, datamartId);
  return view;
}

/**
 * DELETE /tenant/datamart/{id}: the record goes (the datamart is gone at once, and off the tenant's
 * datamart count, in the same commit), then the rest of its collection (by the follow-up sweeper,
 * if this request stops first).
 */
export async function deleteDatamart(tenantId: number, datamartId: number): Promise<void> {
  if (!(await deleteDatamartRecord(tenantId, datamartId, [recordFollowUp(tidying(tenantId, datamartId))]))) {
    throw datamartNotFound();
  }
  await tidyDatamart(tenantId, datamartId);
}

/** Brings the datamart's collection in line with its record (tidyCollection), then deletes the follow-up that asked for it. */
export async function tidyDatamart(tenantId: number, datamartId: number): Promise<void> {
  await tidyCollection(tenantId, datamartId, permissionLedger(tenantId));
  await deleteFollowUp(tidying(tenantId, datamartId));
}

/** Spec 2.3, exactly: `id, nome, dm_tables:[{tableId, table:{id, nome, columns}}], owners:[{userId, user:{id, nome, login}}]`. */
export function describeDatamart(
  structure: DatamartStructure,
  tables: ReadonlyMap<number, StoredOf<'table'>>,
  users: ReadonlyMap<number, UserName>,
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

/**
 * What describing datamarts needs besides their records, read beside them (not after): the tenant's
 * tables and the owners index (one Query each, however many datamarts).
 */
function describeContext(tenantId: number) {
  return Promise.all([loadResourcesOfType(tenantId, 'table'), listDatamartOwners(tenantId)]);
}

/**
 * GET /tenant/datamart (spec 4.7): every datamart, or a page of `limit`. One Query of the index
 * (its entries are the records, lists included), beside the tenant's tables and the owners index.
 */
export async function listDatamarts(
  tenantId: number,
  limit: number | undefined,
  cursor: string | undefined,
): Promise<Omit<Page<DatamartView>, 'cursorAfter'>> {
  const [page, [tables, owners]] = await Promise.all([listDatamartRecords(tenantId, limit, cursor), describeContext(tenantId)]);
  const users = new Map(owners.map((user) => [user.userId, user]));
  const tableMap = new Map(tables.map((table) => [table.id, table]));
  return {
    items: page.items.map((record) => describeDatamart(structureOf(record), tableMap, users)),
    nextCursor: page.nextCursor,
  };
}

/** GET /tenant/datamart/{id}: its record, beside the tables and the owners index. */
export async function describeOneDatamart(tenantId: number, datamartId: number): Promise<DatamartView> {
  const [structure, [tables, owners]] = await Promise.all([findStructure(tenantId, datamartId), describeContext(tenantId)]);
  if (!structure) throw datamartNotFound();
  const users = new Map(owners.map((user) => [user.userId, user]));
  return describeDatamart(structure, new Map(tables.map((table) => [table.id, table])), users);
}
