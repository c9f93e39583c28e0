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

export interface EffectivePermission {
  tableId: number;
  allowed: boolean;
  allow_export: boolean;
  expires_in: string | null;
  hidden_columns: string[];
  /** Rows visible: those passing ALL filters of AT LEAST ONE alternative (OR of ANDs). null = every row. When not allowed: null. */
  row_filters: RowFilter[][] | null;
  /** Which records decided: the user's own record, the user's groups' records, or none (no access). */
  source: 'user' | 'groups' | 'none';
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
  groupRecords: readonly PermissionRecord[],
  now: Date,
): EffectivePermission {
  const nowMs = instantOfNow(now);
  if (userRecord !== undefined && userRecord.tableId === tableId && isLive(userRecord, nowMs)) {
    return fromUserRecord(tableId, userRecord);
  }
  const liveGroupRecords = groupRecords.filter((record) => record.tableId === tableId && isLive(record, nowMs));
  return fromGroupRecords(tableId, liveGroupRecords);
}

/**
 * The effective permission on every table that any given record mentions (expired or not), sorted by tableId.
 * Throws when two user records name the same table: the store keeps one per user and table, so two mean a
 * caller bug, and silently picking one could grant or deny the wrong access.
 */
export function effectivePermissions(
  userRecords: readonly PermissionRecord[],
  groupRecords: readonly PermissionRecord[],
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

/** The user's own record overrides every group, in both directions (spec 2.4). */
function fromUserRecord(tableId: number, record: PermissionRecord): EffectivePermission {
  if (!record.allowed) return noAccess(tableId, 'user');
  return {
    tableId,
    allowed: true,
    allow_export: record.allow_export,
    expires_in: record.expires_in,
    hidden_columns: sortedUnique(record.hidden_columns),
    row_filters: record.filters.length === 0 ? null : [canonicalAlternative(record.filters)],
    source: 'user',
  };
}

/**
 * Groups combine so that each allowing group's access is kept whole: belonging to one more group
 * can only widen what the user sees. Denying group records grant nothing and take nothing away.
 */
function fromGroupRecords(tableId: number, liveRecords: readonly PermissionRecord[]): EffectivePermission {
  const allowing = liveRecords.filter((record) => record.allowed);
  if (allowing.length === 0) return noAccess(tableId, liveRecords.length > 0 ? 'groups' : 'none');
  return {
    tableId,
    allowed: true,
    allow_export: allowing.some((record) => record.allow_export),
    expires_in: latestExpiry(allowing),
    hidden_columns: columnsHiddenByAll(allowing),
    row_filters: anyOfFilters(allowing),
    source: 'groups',
  };
}

/**
 * One shape for every denial, whatever the records said about columns, rows, export or expiry:
 * with no access there is nothing to hide, filter, export or expire.
 */
function noAccess(tableId: number, source: EffectivePermission['source']): EffectivePermission {
  return { tableId, allowed: false, allow_export: false, expires_in: null, hidden_columns: [], row_filters: null, source };
}

/** Access lasts as long as the longest-lasting group grants it; a group with no expiry grants it forever. */
function latestExpiry(records: readonly PermissionRecord[]): string | null {
  let latest: string | null = null;
  for (const record of records) {
    if (record.expires_in === null) return null;
    if (latest === null || isLaterExpiry(record.expires_in, latest)) latest = record.expires_in;
  }
  return latest;
}

/** Equal instants written differently are ordered by their text, so the pick never depends on the records' order. */
function isLaterExpiry(candidate: string, current: string): boolean {
  const difference = Date.parse(candidate) - Date.parse(current);
  return difference > 0 || (difference === 0 && candidate < current);
}

/** A column stays hidden only if no allowing group shows it. */
function columnsHiddenByAll(records: readonly PermissionRecord[]): string[] {
  const [first, ...others] = records;
  if (first === undefined) return [];
  const hiddenByOthers = others.map((record) => new Set(record.hidden_columns));
  return sortedUnique(first.hidden_columns.filter((column) => hiddenByOthers.every((hidden) => hidden.has(column))));
}

/** A row is visible if any allowing group sees it; a group without filters sees every row, so then nothing is filtered. */
function anyOfFilters(records: readonly PermissionRecord[]): RowFilter[][] | null {
  if (records.some((record) => record.filters.length === 0)) return null;
  const alternativesByKey = new Map<string, RowFilter[]>();
  for (const record of records) {
    const alternative = canonicalAlternative(record.filters);
    alternativesByKey.set(alternativeKey(alternative), alternative);
  }
  return [...alternativesByKey.entries()].sort(([a], [b]) => compareText(a, b)).map(([, alternative]) => alternative);
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

function groupByTable(records: readonly PermissionRecord[]): Map<number, PermissionRecord[]> {
  const byTable = new Map<number, PermissionRecord[]>();
  for (const record of records) {
    const tableRecords = byTable.get(record.tableId);
    if (tableRecords === undefined) byTable.set(record.tableId, [record]);
    else tableRecords.push(record);
  }
  return byTable;
}

/** The longest `expires_in` a record holds (the schema's bound): an entry may show any of its records' expiries. */
const longestExpiry = 'x'.repeat(40);

/**
 * The most answer bytes (whole-list.ts answerBytes: as the answer carries them) that one record on
 * one table of one datamart can add to one user's effective permissions: an entry of its own (with
 * its hidden columns and its filters as the one alternative) and the comma before it. Whatever the
 * records combine into, an entry is never larger than the charges of the records that make it: its
 * fixed fields are one record's, its hidden columns a subset of one record's, and each alternative one
 * record's filters (deduplicated). So a user's effective permissions are never larger than the
 * charges of their own records and of their groups' records, which the quotas bound (directory/quotas.ts).
 */
export function permissionCharge(datamartId: number, record: PermissionRecord): number {
  return (
    answerBytes({
      datamartId,
      tableId: record.tableId,
      allowed: false,
      allow_export: false,
      expires_in: longestExpiry,
      hidden_columns: record.hidden_columns,
      row_filters: [record.filters.map(({ column, operator, value }) => ({ column, operator, value }))],
      source: 'groups',
    }) + 1
  );
}
