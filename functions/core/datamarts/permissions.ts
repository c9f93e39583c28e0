import {
  findGroupPermissionBytes,
  listGroups,
  listUserMemberships,
  listUserNames,
  type GroupRecord,
  type MembershipRecord,
  type UserName,
  type UserRecord,
} from '#functions/core/directory/directory-repository.ts';
import { requireGroup } from '#functions/core/directory/groups.ts';
import { maxGroupPermissionBytes, maxUserPermissionBytes } from '#functions/core/directory/quotas.ts';
import { requireUser } from '#functions/core/directory/users.ts';
import { badRequest, conflict, type FieldError } from '#functions/core/errors.ts';
import type { Page } from '#functions/core/store/dynamo.ts';
import { loadResourcesOfType } from '#functions/core/templates/template-repository.ts';
import type { StoredOf } from '#functions/core/templates/tenant-resources.ts';
import {
  type DatamartRecord,
  type DatamartStructure,
  findStructure,
  listDatamartPermissions,
  listDatamartPermissionsPage,
  listDatamartTables,
  listIndexedPermissions,
  type PermissionSubject,
  replacePermissionRecords,
  type StoredPermission,
} from './datamart-repository.ts';
import { datamartNotFound, loadStructure } from './datamarts.ts';
import { permissionLedger } from './ledger.ts';
import {
  type EffectivePermission,
  effectivePermissions,
  type GroupPermissionRecord,
  type PermissionRecord,
  permissionCharge,
} from './effective-permissions.ts';

const rfc3339 = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/;

/** The subject must be a user or group of this tenant (another tenant's is 404, as if it did not exist). */
async function requireSubject(
  tenantId: number,
  subject: PermissionSubject,
  subjectId: number,
): Promise<UserRecord | GroupRecord> {
  if (subject === 'user') return requireUser(tenantId, subjectId);
  return requireGroup(tenantId, subjectId);
}

const megabytes = (bytes: number) => `${(bytes / (1024 * 1024)).toFixed(2)} MB`;

/** The quota a subject's records count against, and what it has used (read beside the records). */
async function quotaOf(tenantId: number, subject: PermissionSubject, named: UserRecord | GroupRecord) {
  if (subject === 'user') {
    return { max: maxUserPermissionBytes, used: (named as UserRecord).permBytes ?? 0, whose: "a user's own records" };
  }
  return {
    max: maxGroupPermissionBytes,
    used: await findGroupPermissionBytes(tenantId),
    whose: "all the tenant's group records",
  };
}

const overQuota = (quota: { max: number; used: number; whose: string }, delta: number) =>
  conflict(
    `These permission records would take ${quota.whose} to ${megabytes(quota.used + delta)} of what they may add to a ` +
      `user's effective permissions (at most ${megabytes(quota.max)}, counted as the answer carries them): fewer or ` +
      'smaller records (filters, hidden columns), or remove others first',
    'permission_limit',
  );

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

/** A user or a group, as far as naming it in a permission record goes. */
type SubjectName = UserName | GroupRecord;

/** Attempts of a replace that met another write of the same records (the last one to commit wins, as with any replace). */
const replaceAttempts = 10;

/**
 * Makes the subject's records on the datamart exactly `records`, charged to the subject's quota in
 * the same transactions (which also fail when the subject is gone: no record outlives its user or
 * group), each record only while it is as read: a replace that met another write of the same
 * records reads them again and goes again. Returns the records as stored and the subject's name.
 */
async function writeRecords(
  tenantId: number,
  datamartId: number,
  subject: PermissionSubject,
  subjectId: number,
  records: readonly PermissionRecord[],
  firstRead: [UserRecord | GroupRecord, StoredPermission[]],
) {
  let read: [UserRecord | GroupRecord, StoredPermission[]] = firstRead;
  for (let attempt = 0; attempt < replaceAttempts; attempt++) {
    const [named, existing] = read;
    const quota = await quotaOf(tenantId, subject, named);
    const before = new Map(existing.map((record) => [record.tableId, record.charge]));
    const delta =
      records.reduce((sum, record) => sum + permissionCharge(datamartId, record) - (before.get(record.tableId) ?? 0), 0) -
      existing
        .filter((record) => !records.some((next) => next.tableId === record.tableId))
        .reduce((sum, record) => sum + record.charge, 0);
    if (delta > 0 && quota.used + delta > quota.max) throw overQuota(quota, delta);
    const outcome = await replacePermissionRecords(
      tenantId,
      datamartId,
      subject,
      subjectId,
      records,
      existing,
      permissionLedger(tenantId),
    );
    if (outcome.written) return { stored: outcome.stored, named };
    // Read again: the subject may be gone (404), over its quota since, or its records written by another request.
    await new Promise((resolve) => setTimeout(resolve, Math.random() * 20 * (attempt + 1)));
    read = await Promise.all([
      requireSubject(tenantId, subject, subjectId),
      listDatamartPermissions(tenantId, datamartId, subject, subjectId),
    ]);
  }
  throw conflict('The permission records changed while this request ran; retry it', 'concurrent_change');
}

/**
 * PUT /tenant/datamart/{id}/user/{userId} and …/group/{groupId}: the subject's records on this
 * datamart become exactly `records` (one per table), within the subject's quota. Returns them as
 * stored (spec 2.4's shape).
 */
export async function replacePermissions(
  tenantId: number,
  datamartId: number,
  subject: PermissionSubject,
  subjectId: number,
  records: readonly PermissionRecord[],
) {
  const [structure, named, tables, existing] = await Promise.all([
    loadStructure(tenantId, datamartId),
    requireSubject(tenantId, subject, subjectId),
    loadResourcesOfType(tenantId, 'table'),
    listDatamartPermissions(tenantId, datamartId, subject, subjectId),
  ]);
  const tableMap = new Map(tables.map((table) => [table.id, table]));
  checkPermissions(records, structure, tableMap);
  const written = await writeRecords(tenantId, datamartId, subject, subjectId, records, [named, existing]);
  return describeRecords(written.stored, structure, tables, [written.named]);
}

/** DELETE of the same paths: the subject has no record on this datamart any more. Returns its records (none). */
export async function removePermissions(
  tenantId: number,
  datamartId: number,
  subject: PermissionSubject,
  subjectId: number,
): Promise<PermissionRow[]> {
  const [, named, existing] = await Promise.all([
    loadStructure(tenantId, datamartId),
    requireSubject(tenantId, subject, subjectId),
    listDatamartPermissions(tenantId, datamartId, subject, subjectId),
  ]);
  await writeRecords(tenantId, datamartId, subject, subjectId, [], [named, existing]);
  return [];
}

const recordFields = (record: PermissionRecord) => ({
  allowed: record.allowed,
  allow_export: record.allow_export,
  expires_in: record.expires_in,
  hidden_columns: record.hidden_columns,
  filters: record.filters,
});

/**
 * Records as spec 2.4 shows them, in the order of the collection (subject, then table). Records on
 * a table taken out of the datamart (being swept) and of subjects that are gone no longer count.
 */
function describeRecords(
  records: readonly StoredPermission[],
  structure: DatamartStructure,
  tables: readonly StoredOf<'table'>[],
  subjects: readonly SubjectName[],
): PermissionRow[] {
  const tableNames = new Map(tables.map((table) => [table.id, table.nome]));
  const names = new Map(subjects.map((named) => ['userId' in named ? named.userId : named.groupId, named]));
  const inDatamart = new Set(structure.tableIds);
  const sorted = [...records].sort((a, b) => a.subjectId - b.subjectId || a.tableId - b.tableId);
  return sorted.flatMap<PermissionRow>((record) => {
    const named = names.get(record.subjectId);
    if (!named || !inDatamart.has(record.tableId)) return [];
    const fields = {
      tableId: record.tableId,
      table: { id: record.tableId, nome: tableNames.get(record.tableId) ?? '' },
      ...recordFields(record),
    };
    return 'userId' in named
      ? [{ userId: named.userId, user: { id: named.userId, nome: named.nome, login: named.login }, ...fields }]
      : [{ groupId: named.groupId, group: { id: named.groupId, nome: named.nome }, ...fields }];
  });
}

type RowFields = ReturnType<typeof recordFields> & { tableId: number; table: { id: number; nome: string } };

/** A permission record as spec 2.4 shows it (a user's or a group's). */
export type PermissionRow =
  | ({ userId: number; user: { id: number; nome: string; login: string } } & RowFields)
  | ({ groupId: number; group: { id: number; nome: string } } & RowFields);

/**
 * GET /tenant/datamart/{id}/user and …/group (spec 4.8, 4.9): every record of that kind on the
 * datamart (or a page of `limit`), exactly as spec 2.4 shows it. One Query of the datamart's
 * records, beside its structure, the tenant's tables and its users (or groups) that name them.
 */
export async function listPermissions(
  tenantId: number,
  datamartId: number,
  subject: PermissionSubject,
  limit: number | undefined,
  cursor: string | undefined,
): Promise<Omit<Page<PermissionRow>, 'cursorAfter'>> {
  const [structure, page, tables, subjects] = await Promise.all([
    loadStructure(tenantId, datamartId),
    listDatamartPermissionsPage(tenantId, datamartId, subject, limit, cursor),
    loadResourcesOfType(tenantId, 'table'),
    subject === 'user' ? listUserNames(tenantId) : listGroups(tenantId),
  ]);
  return { items: describeRecords(page.items, structure, tables, subjects), nextCursor: page.nextCursor };
}

/** The items by key, in their order. */
function groupBy<T, K>(items: readonly T[], keyOf: (item: T) => K): Map<K, T[]> {
  const groups = new Map<K, T[]>();
  for (const item of items) {
    const key = keyOf(item);
    const group = groups.get(key);
    if (group) group.push(item);
    else groups.set(key, [item]);
  }
  return groups;
}

/** A stored group record as effective permissions take it: the group it is of named (its grant says whose it is). */
const asGroupRecord = (record: StoredPermission): StoredPermission & GroupPermissionRecord => ({
  ...record,
  groupId: record.subjectId,
});

/** A user's effective permission on one table of a datamart. */
export type DatamartPermission = EffectivePermission & { datamartId: number };

/**
 * What the effective permissions of any users take besides their own records, read beside the
 * users (one level): the groups, every group's records in the permission index, and each datamart's
 * tables (a record counts only while its datamart exists and still has its table).
 */
export interface AccessContext {
  groups: GroupRecord[];
  groupRecords: StoredPermission[];
  datamarts: Array<Pick<DatamartRecord, 'datamartId' | 'tableIds'>>;
}

export async function readAccessContext(tenantId: number): Promise<AccessContext> {
  const [groups, groupRecords, datamarts] = await Promise.all([
    listGroups(tenantId),
    listIndexedPermissions(tenantId, 'group'),
    listDatamartTables(tenantId),
  ]);
  return { groups, groupRecords, datamarts };
}

/**
 * Effective permissions per datamart table (DESIGN 7) of any user, from the users' records in the
 * permission index (`userRecords`), their memberships and the context: the records are sorted out
 * once, then each user's permissions are worked out only when asked for (an answer measures each
 * user as it is built, and stops at the first that does not fit). Memberships and records of groups
 * that are gone, and records of users not in `userRecords`, count for nothing.
 */
export function effectiveAccess(
  userRecords: readonly StoredPermission[],
  memberships: readonly MembershipRecord[],
  context: AccessContext,
  now = new Date(),
): (userId: number) => DatamartPermission[] {
  const tablesOf = new Map(context.datamarts.map((datamart) => [datamart.datamartId, new Set(datamart.tableIds)]));
  const live = [...userRecords, ...context.groupRecords].filter((record) => tablesOf.get(record.datamartId)?.has(record.tableId));
  const bySubject = groupBy(live, (record) => `${record.subject}:${record.subjectId}`);
  const groupIds = new Set(context.groups.map((group) => group.groupId));
  const groupsOf = groupBy(
    memberships.filter((membership) => groupIds.has(membership.groupId)),
    (membership) => membership.userId,
  );
  // Each group's records named by the group, once: the grants they give say whose they are.
  const recordsOfGroup = new Map(
    [...groupIds].map((groupId) => [groupId, (bySubject.get(`group:${groupId}`) ?? []).map(asGroupRecord)]),
  );
  return (userId) => {
    const own = groupBy(bySubject.get(`user:${userId}`) ?? [], (record) => record.datamartId);
    const inherited = groupBy(
      (groupsOf.get(userId) ?? []).flatMap((membership) => recordsOfGroup.get(membership.groupId) ?? []),
      (record) => record.datamartId,
    );
    const datamartIds = [...new Set([...own.keys(), ...inherited.keys()])].sort((a, b) => a - b);
    return datamartIds.flatMap((datamartId) =>
      effectivePermissions(own.get(datamartId) ?? [], inherited.get(datamartId) ?? [], now).map((permission) => ({
        datamartId,
        ...permission,
      })),
    );
  };
}

/**
 * GET /tenant/datamart/{id}/user/{userId}/effective: what the user really sees of each table of the
 * datamart. One level: the datamart's structure and the user's and groups' records on it (its
 * collection), the user, the user's memberships and the groups.
 */
export async function effectiveOnDatamart(tenantId: number, datamartId: number, userId: number): Promise<EffectivePermission[]> {
  const [structure, own, groupRecords, , memberships, groups] = await Promise.all([
    findStructure(tenantId, datamartId),
    listDatamartPermissions(tenantId, datamartId, 'user', userId),
    listDatamartPermissions(tenantId, datamartId, 'group'),
    requireUser(tenantId, userId),
    listUserMemberships(tenantId, userId),
    listGroups(tenantId),
  ]);
  if (!structure) throw datamartNotFound();
  const tables = new Set(structure.tableIds);
  const groupIds = new Set(groups.map((group) => group.groupId));
  const mine = new Set(memberships.map((membership) => membership.groupId).filter((groupId) => groupIds.has(groupId)));
  return effectivePermissions(
    own.filter((record) => tables.has(record.tableId)),
    groupRecords.filter((record) => mine.has(record.subjectId) && tables.has(record.tableId)).map(asGroupRecord),
    new Date(),
  );
}
