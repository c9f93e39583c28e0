import { findGroups, findUsers } from '#functions/core/directory/directory-repository.ts';
import { groupsByUser, requireGroup } from '#functions/core/directory/groups.ts';
import { requireUser } from '#functions/core/directory/users.ts';
import { badRequest, type FieldError } from '#functions/core/errors.ts';
import type { PermissionSubject } from '#functions/core/store/keys.ts';
import { loadResourcesOfType } from '#functions/core/templates/template-repository.ts';
import type { StoredOf } from '#functions/core/templates/tenant-resources.ts';
import {
  type DatamartStructure,
  findDatamartRecords,
  type StoredPermission,
  listDatamartPermissions,
  listSubjectPermissions,
  replacePermissionRecords,
} from './datamart-repository.ts';
import { loadStructure } from './datamarts.ts';
import { type EffectivePermission, effectivePermissions, type PermissionRecord } from './effective-permissions.ts';

const rfc3339 = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/;

/** The subject must be a user or group of this tenant (another tenant's is 404, as if it did not exist). */
async function requireSubject(tenantId: number, subject: PermissionSubject, subjectId: number) {
  if (subject === 'user') return requireUser(tenantId, subjectId);
  return requireGroup(tenantId, subjectId);
}

/** The checks beyond the schema: tables of this datamart, columns of those tables, real instants. */
function checkPermissions(
  records: readonly PermissionRecord[],
  structure: DatamartStructure,
  tables: ReadonlyMap<number, StoredOf<'table'>>,
) {
  const errors: FieldError[] = [];
  const at = (pointer: string, message: string) => errors.push({ location: 'body', pointer, message });
  const seen = new Set<number>();
  records.forEach((record, index) => {
    const base = `/permissions/${index}`;
    if (seen.has(record.tableId)) at(`${base}/tableId`, `repeats table ${record.tableId}`);
    seen.add(record.tableId);
    const table = tables.get(record.tableId);
    if (!structure.tableIds.includes(record.tableId) || !table) {
      at(`${base}/tableId`, `${record.tableId} is not a table of this datamart`);
      return;
    }
    const columns = new Set(table.columns.map((column) => column.column_name));
    record.hidden_columns.forEach((column, position) => {
      if (!columns.has(column))
        at(`${base}/hidden_columns/${position}`, `${JSON.stringify(column)} is not a column of table ${table.id}`);
    });
    record.filters.forEach((filter, position) => {
      if (!columns.has(filter.column))
        at(`${base}/filters/${position}/column`, `${JSON.stringify(filter.column)} is not a column of table ${table.id}`);
    });
    if (record.expires_in !== null && (!rfc3339.test(record.expires_in) || Number.isNaN(Date.parse(record.expires_in)))) {
      at(`${base}/expires_in`, 'must be an RFC 3339 date-time or null');
    }
  });
  const [first] = errors;
  if (first) throw badRequest(`Invalid permissions: ${first.pointer} ${first.message}`, errors, 'invalid_permissions');
}

/**
 * PUT /tenant/datamart/{id}/user/{userId} and …/group/{groupId}: the subject's records on this
 * datamart become exactly `records` (one per table). Returns them as stored.
 */
export async function replacePermissions(
  tenantId: number,
  datamartId: number,
  subject: PermissionSubject,
  subjectId: number,
  records: readonly PermissionRecord[],
) {
  const [structure, , tables] = await Promise.all([
    loadStructure(tenantId, datamartId),
    requireSubject(tenantId, subject, subjectId),
    loadResourcesOfType(tenantId, 'table'),
  ]);
  checkPermissions(records, structure, new Map(tables.map((table) => [table.id, table])));
  const existing = await listDatamartPermissions(tenantId, datamartId, subject, subjectId);
  await replacePermissionRecords(tenantId, datamartId, subject, subjectId, records, existing);
  return permissionsOfSubject(tenantId, datamartId, subject, subjectId);
}

/** DELETE of the same paths: the subject has no record on this datamart any more. Returns its records (none). */
export async function removePermissions(tenantId: number, datamartId: number, subject: PermissionSubject, subjectId: number) {
  await Promise.all([loadStructure(tenantId, datamartId), requireSubject(tenantId, subject, subjectId)]);
  const existing = await listDatamartPermissions(tenantId, datamartId, subject, subjectId);
  await replacePermissionRecords(tenantId, datamartId, subject, subjectId, [], existing);
  return permissionsOfSubject(tenantId, datamartId, subject, subjectId);
}

const recordFields = (record: PermissionRecord) => ({
  allowed: record.allowed,
  allow_export: record.allow_export,
  expires_in: record.expires_in,
  hidden_columns: record.hidden_columns,
  filters: record.filters,
});

/**
 * GET /tenant/datamart/{id}/user and …/group (spec 4.8, 4.9): every record of that kind on the
 * datamart, exactly as spec 2.4 shows it.
 */
export async function listPermissions(tenantId: number, datamartId: number, subject: PermissionSubject) {
  const [structure, stored, tables] = await Promise.all([
    loadStructure(tenantId, datamartId),
    listDatamartPermissions(tenantId, datamartId, subject),
    loadResourcesOfType(tenantId, 'table'),
  ]);
  // Records on a table taken out of the datamart are being swept: they no longer count.
  const records = stored.filter((record) => structure.tableIds.includes(record.tableId));
  const tableNames = new Map(tables.map((table) => [table.id, table.nome]));
  const subjectIds = [...new Set(records.map((record) => record.subjectId))];
  if (subject === 'user') {
    const users = new Map((await findUsers(tenantId, subjectIds)).map((user) => [user.userId, user]));
    return records.flatMap((record) => {
      const user = users.get(record.subjectId);
      return user
        ? [
            {
              userId: user.userId,
              user: { id: user.userId, nome: user.nome, login: user.login },
              tableId: record.tableId,
              table: { id: record.tableId, nome: tableNames.get(record.tableId) ?? '' },
              ...recordFields(record),
            },
          ]
        : [];
    });
  }
  const groups = new Map((await findGroups(tenantId, subjectIds)).map((group) => [group.groupId, group]));
  return records.flatMap((record) => {
    const group = groups.get(record.subjectId);
    return group
      ? [
          {
            groupId: group.groupId,
            group: { id: group.groupId, nome: group.nome },
            tableId: record.tableId,
            table: { id: record.tableId, nome: tableNames.get(record.tableId) ?? '' },
            ...recordFields(record),
          },
        ]
      : [];
  });
}

/**
 * Effective permissions of users per datamart table (DESIGN 7), for GET /tenant/users and
 * …/effective. Reads each user's and each of their groups' records once, on every datamart.
 */
export async function effectiveAccess(
  tenantId: number,
  userIds: readonly number[],
  options: { datamartId?: number; now?: Date; memberships?: Awaited<ReturnType<typeof groupsByUser>> } = {},
): Promise<Map<number, Array<EffectivePermission & { datamartId: number }>>> {
  const memberships = options.memberships ?? (await groupsByUser(tenantId));
  const groupIds = [...new Set(userIds.flatMap((userId) => (memberships.get(userId) ?? []).map((group) => group.id)))];
  const [storedUserRecords, storedGroupRecords] = await Promise.all([
    Promise.all(userIds.map((userId) => listSubjectPermissions(tenantId, 'user', userId))),
    Promise.all(groupIds.map((groupId) => listSubjectPermissions(tenantId, 'group', groupId))),
  ]);
  // Only records on a table of a datamart that still has it count (the others are being swept).
  const datamartIds = [...new Set([...storedUserRecords, ...storedGroupRecords].flat().map((record) => record.datamartId))];
  const datamarts = new Map((await findDatamartRecords(tenantId, datamartIds)).map((record) => [record.datamartId, record]));
  const live = (records: StoredPermission[] | undefined) =>
    (records ?? []).filter((record) => {
      const datamart = datamarts.get(record.datamartId);
      return datamart !== undefined && (datamart.tableIds?.includes(record.tableId) ?? true);
    });
  const userRecords = storedUserRecords.map(live);
  const byGroup = new Map(groupIds.map((groupId, index) => [groupId, live(storedGroupRecords[index])]));
  const now = options.now ?? new Date();
  const result = new Map<number, Array<EffectivePermission & { datamartId: number }>>();
  userIds.forEach((userId, index) => {
    const own = (userRecords[index] ?? []).filter(
      (record) => options.datamartId === undefined || record.datamartId === options.datamartId,
    );
    const inherited = (memberships.get(userId) ?? [])
      .flatMap((group) => byGroup.get(group.id) ?? [])
      .filter((record) => options.datamartId === undefined || record.datamartId === options.datamartId);
    const datamartIds = [...new Set([...own, ...inherited].map((record) => record.datamartId))].sort((a, b) => a - b);
    result.set(
      userId,
      datamartIds.flatMap((datamartId) =>
        effectivePermissions(
          own.filter((record) => record.datamartId === datamartId),
          inherited.filter((record) => record.datamartId === datamartId),
          now,
        ).map((permission) => ({ datamartId, ...permission })),
      ),
    );
  });
  return result;
}

/** GET /tenant/datamart/{id}/user/{userId}/effective: what the user really sees of each table of the datamart. */
export async function effectiveOnDatamart(tenantId: number, datamartId: number, userId: number): Promise<EffectivePermission[]> {
  await Promise.all([loadStructure(tenantId, datamartId), requireUser(tenantId, userId)]);
  const access = await effectiveAccess(tenantId, [userId], { datamartId });
  return (access.get(userId) ?? []).map(({ datamartId: _datamart, ...permission }) => permission);
}

/** One subject's records on a datamart, in the spec 2.4 shape (what a PUT or DELETE of them answers). */
async function permissionsOfSubject(tenantId: number, datamartId: number, subject: PermissionSubject, subjectId: number) {
  return (await listPermissions(tenantId, datamartId, subject)).filter((record) =>
    'userId' in record ? record.userId === subjectId : record.groupId === subjectId,
  );
}
