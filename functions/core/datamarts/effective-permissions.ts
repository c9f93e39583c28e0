/**
 * Effective permissions of one user on datamart tables (spec 2.4 "inheritance", DESIGN 7).
 *
 * Pure: the caller reads the user's records and the records of the user's groups and passes them
 * in with the current time; nothing here does I/O or reads the clock, so the rule can be tested
 * exhaustively. Every output array is sorted, so equal inputs in any order give equal results.
 */
import type { Filter, Permission } from '#functions/core/api/validators/set-permissions.cjs';
import { answerBytes } from '#functions/core/api/whole-list.ts';

export type RowFilter = Filter;

/**
 * A stored permission record of one subject (a user or a group) on one table of one datamart (spec
 * 2.4 fields), as PUT …/user/{userId} and …/group/{groupId} set it: `expires_in` null is no expiry;
 * all `filters` must hold (AND), none is every row.
 */
export type PermissionRecord = Permission;

/** A group's record, with the group it is of (a grant it gives names it). */
export type GroupPermissionRecord = PermissionRecord & { groupId: number };

/** The fields of a grant beyond whose it is: one record's access, kept whole. */
interface GrantFields {
  allow_export: boolean;
  expires_in: string | null;
  hidden_columns: string[];
  /** The record's filters as `row_filters` reads them: null (every row) or one alternative. */
  row_filters: RowFilter[][] | null;
}

/**
 * One record that gives access, kept whole (DESIGN 7): a cell (row, column) is visible through it if
 * its row filters let the row through AND it shows the column; it exports and expires as it says.
 */
export type Grant = ({ source: 'user' } | { source: 'group'; groupId: number }) & GrantFields;

export interface EffectivePermission {
  tableId: number;
  /** True when there is at least one grant. */
  allowed: boolean;
  /** The widest single policy no wider than any grant: export only if every grant exports. */
  allow_export: boolean;
  /** The earliest expiry of the grants; null when none expires (or when not allowed). */
  expires_in: string | null;
  /** Every column some grant hides. */
  hidden_columns: string[];
  /** Rows visible: those passing ALL filters of AT LEAST ONE alternative (OR of ANDs): the grants' filters. null = every row. When not allowed: null. */
  row_filters: RowFilter[][] | null;
  /** Which records decided: the user's own record, the user's groups' records, or none (no access). */
  source: 'user' | 'groups' | 'none';
  /** What the user may really see: a cell is visible if ONE grant shows it. The user's own, or one per allowing group by groupId. */
  grants: Grant[];
}

/**
 * The effective permission of a user on one table.
 *
 * Records of other tables are ignored, so a caller may pass all of a user's group records at once.
 * Throws a RangeError when `now` is an invalid Date, since every expiry check would then be meaningless.
 */
export function effectivePermission(
  tableId: number,
  userRecord: PermissionRecord | undefined,
  groupRecords: readonly GroupPermissionRecord[],
  now: Date,
): EffectivePermission {
  const nowMs = instantOfNow(now);
  if (userRecord !== undefined && userRecord.tableId === tableId && isLive(userRecord, nowMs)) {
    // The user's own record overrides every group, in both directions (spec 2.4).
    return fromGrants(tableId, userRecord.allowed ? [{ source: 'user', ...grantFields(userRecord) }] : [], 'user');
  }
  const liveGroupRecords = groupRecords.filter((record) => record.tableId === tableId && isLive(record, nowMs));
  // Denying group records grant nothing and take nothing away.
  const grants = liveGroupRecords
    .filter((record) => record.allowed)
    .map((record): Grant => ({ source: 'group', groupId: record.groupId, ...grantFields(record) }))
    .sort(compareGrants);
  return fromGrants(tableId, grants, liveGroupRecords.length > 0 ? 'groups' : 'none');
}

/**
 * The effective permission on every table that any given record mentions (expired or not), sorted by tableId.
 * Throws when two user records name the same table: the store keeps one per user and table, so two mean a
 * caller bug, and silently picking one could grant or deny the wrong access.
 */
export function effectivePermissions(
  userRecords: readonly PermissionRecord[],
  groupRecords: readonly GroupPermissionRecord[],
  now: Date,
): EffectivePermission[] {
  const userRecordByTable = indexUserRecordsByTable(userRecords);
  const groupRecordsByTable = groupByTable(groupRecords);
  const tableIds = [...new Set([...userRecordByTable.keys(), ...groupRecordsByTable.keys()])].sort((a, b) => a - b);
  return tableIds.map((tableId) =>
    effectivePermission(tableId, userRecordByTable.get(tableId), groupRecordsByTable.get(tableId) ?? [], now),
  );
}

function instantOfNow(now: Date): number {
  const nowMs = now.getTime();
  if (Number.isNaN(nowMs)) throw new RangeError('now is not a valid Date');
  return nowMs;
}

/**
 * A record counts only while its expiry is strictly after now: an access that "expires at T" is gone at T.
 * An expiry that does not parse counts as already past, so a malformed record can never grant access.
 * Instants are compared, not strings: "2030-01-01T02:00:00+02:00" and "2030-01-01T00:00:00Z" are equal.
 */
function isLive(record: PermissionRecord, nowMs: number): boolean {
  if (record.expires_in === null) return true;
  const expiresMs = Date.parse(record.expires_in);
  return !Number.isNaN(expiresMs) && expiresMs > nowMs;
}

/** A record's access as a grant: its columns sorted and unique, its filters as one alternative (none: every row). */
function grantFields(record: PermissionRecord): GrantFields {
  return {
    allow_export: record.allow_export,
    expires_in: record.expires_in,
    hidden_columns: sortedUnique(record.hidden_columns),
    row_filters: record.filters.length === 0 ? null : [canonicalAlternative(record.filters)],
  };
}

/**
 * The grants, and beside them the widest single policy no wider than any grant (DESIGN 7): every cell
 * it shows is shown by one grant. A row it lets through passes one grant's filters (rows: OR of the
 * grants'), and that grant shows every column the policy shows (hidden: the union), exports if the
 * policy does (only if every grant does) and lives as long as the policy (the earliest expiry). Rows
 * and columns of different grants are never crossed: that over-granted (issue 34).
 */
function fromGrants(tableId: number, grants: Grant[], source: EffectivePermission['source']): EffectivePermission {
  if (grants.length === 0) return noAccess(tableId, source);
  return {
    tableId,
    allowed: true,
    allow_export: grants.every((grant) => grant.allow_export),
    expires_in: earliestExpiry(grants),
    hidden_columns: sortedUnique(grants.flatMap((grant) => grant.hidden_columns)),
    row_filters: anyOfFilters(grants),
    source,
    grants,
  };
}

/**
 * One shape for every denial, whatever the records said about columns, rows, export or expiry:
 * with no access there is nothing to hide, filter, export or expire, and no grant.
 */
export function noAccess(tableId: number, source: EffectivePermission['source']): EffectivePermission {
  return {
    tableId,
    allowed: false,
    allow_export: false,
    expires_in: null,
    hidden_columns: [],
    row_filters: null,
    source,
    grants: [],
  };
}

/** The flat policy lasts as long as the first grant to expire; null only when no grant expires. */
function earliestExpiry(grants: readonly Grant[]): string | null {
  let earliest: string | null = null;
  for (const { expires_in: expiry } of grants) {
    if (expiry !== null && (earliest === null || isEarlierExpiry(expiry, earliest))) earliest = expiry;
  }
  return earliest;
}

/** Equal instants written differently are ordered by their text, so the pick never depends on the records' order. */
function isEarlierExpiry(candidate: string, current: string): boolean {
  const difference = Date.parse(candidate) - Date.parse(current);
  return difference < 0 || (difference === 0 && candidate < current);
}

/** A row is visible if one grant lets it through; a grant without filters lets every row through, so then nothing is filtered. */
function anyOfFilters(grants: readonly Grant[]): RowFilter[][] | null {
  const alternativesByKey = new Map<string, RowFilter[]>();
  for (const { row_filters: rowFilters } of grants) {
    if (rowFilters === null) return null;
    for (const alternative of rowFilters) alternativesByKey.set(alternativeKey(alternative), alternative);
  }
  return [...alternativesByKey.entries()].sort(([a], [b]) => compareText(a, b)).map(([, alternative]) => alternative);
}

/** The user's own grant first, then the groups' by groupId (ties, which the store never holds, by content). */
function compareGrants(a: Grant, b: Grant): number {
  const groupOf = (grant: Grant) => (grant.source === 'group' ? grant.groupId : 0);
  return groupOf(a) - groupOf(b) || compareText(JSON.stringify(a), JSON.stringify(b));
}

/**
 * Filters of one alternative are ANDed, so their order and repeats mean nothing; sorting and deduplicating
 * them makes equal alternatives equal arrays. The filters are copied so the result shares nothing with the input.
 */
function canonicalAlternative(filters: readonly RowFilter[]): RowFilter[] {
  const filtersByKey = new Map<string, RowFilter>();
  for (const { column, operator, value } of filters) {
    filtersByKey.set(filterKey({ column, operator, value }), { column, operator, value });
  }
  return [...filtersByKey.entries()].sort(([a], [b]) => compareText(a, b)).map(([, filter]) => filter);
}

function filterKey(filter: RowFilter): string {
  return JSON.stringify([filter.column, filter.operator, filter.value]);
}

function alternativeKey(alternative: readonly RowFilter[]): string {
  return JSON.stringify(alternative.map(filterKey));
}

function sortedUnique(values: readonly string[]): string[] {
  return [...new Set(values)].sort(compareText);
}

/** Code-unit order, independent of the runtime's locale. */
function compareText(a: string, b: string): number {
  if (a < b) return -1;
  return a > b ? 1 : 0;
}

function indexUserRecordsByTable(records: readonly PermissionRecord[]): Map<number, PermissionRecord> {
  const byTable = new Map<number, PermissionRecord>();
  for (const record of records) {
    if (byTable.has(record.tableId)) throw new Error(`More than one user permission record for table ${record.tableId}`);
    byTable.set(record.tableId, record);
  }
  return byTable;
}

function groupByTable<T extends PermissionRecord>(records: readonly T[]): Map<number, T[]> {
  const byTable = new Map<number, T[]>();
  for (const record of records) {
    const tableRecords = byTable.get(record.tableId);
    if (tableRecords === undefined) byTable.set(record.tableId, [record]);
    else tableRecords.push(record);
  }
  return byTable;
}

/** The longest `expires_in` a record holds (the schema's bound): an entry may show any of its records' expiries. */
const longestExpiry = 'x'.repeat(40);

/** The longest id: a grant names its group by an id of at most these digits. */
const longestId = Number.MAX_SAFE_INTEGER;

/**
 * The most answer bytes (whole-list.ts answerBytes: as the answer carries them) that one record on
 * one table of one datamart can add to one user's effective permissions: an entry of its own (its
 * hidden columns and its filters as the one alternative of the flat fields, and again in its one
 * grant, named by the longest group id) and the comma before it. Whatever the records combine into,
 * an entry is never larger than the charges of the records that make it: its fixed fields are one
 * record's (at most the widest: `false`, the longest expiry, `groups`); its hidden columns the union
 * of its records' (each column, and its comma, in one record's list), each alternative one record's
 * filters (deduplicated), and each grant one record's fields (a user's names no group). So a user's
 * effective permissions are never larger than the charges of their own records and of their groups'
 * records, which the quotas bound (directory/quotas.ts); test/unit/answer-bound.test.ts checks it.
 */
export function permissionCharge(datamartId: number, record: PermissionRecord): number {
  const hiddenColumns = record.hidden_columns;
  const rowFilters = [record.filters.map(({ column, operator, value }) => ({ column, operator, value }))];
  const entry: EffectivePermission & { datamartId: number } = {
    datamartId,
    tableId: record.tableId,
    allowed: false,
    allow_export: false,
    expires_in: longestExpiry,
    hidden_columns: hiddenColumns,
    row_filters: rowFilters,
    source: 'groups',
    grants: [
      {
        source: 'group',
        groupId: longestId,
        allow_export: false,
        expires_in: longestExpiry,
        hidden_columns: hiddenColumns,
        row_filters: rowFilters,
      },
    ],
  };
  return answerBytes(entry) + 1;
}
