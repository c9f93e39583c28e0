/**
 * Effective permissions against a brute-force reference (issue 34, item 1; DESIGN 7).
 *
 * Random records (the user's own and several groups', with row filters over two columns and every
 * operator the service takes, hidden columns, export flags and expiries around now) and every query
 * of a small world: each row, each column, with or without export, at instants from now on. The
 * reference asks the records themselves, one by one: a query is allowed if ONE record that counts
 * lets the row through, shows the column, exports when export is asked and is still live at the
 * instant. Then:
 * - the answer's `grants` allow exactly what the reference allows;
 * - the answer's flat fields never allow what the reference does not (they may allow less).
 * Combining the records' rows and columns independently (the rule before issue 34) fails both.
 */
import fc from 'fast-check';
import { describe, expect, test } from 'vitest';
import {
  type EffectivePermission,
  effectivePermission,
  type GroupPermissionRecord,
  type PermissionRecord,
  type RowFilter,
} from '#functions/core/datamarts/effective-permissions.ts';
import { tablePermission } from '#test/support/permissions.ts';

const now = new Date('2030-06-15T12:00:00Z');
const nowMs = now.getTime();
const tableId = 7;
const minute = 60_000;

// ---------------------------------------------------------------------------------------------
// The world: rows over two filtered columns, four columns to see, instants from now on.
// ---------------------------------------------------------------------------------------------

type Row = Readonly<Record<'region' | 'amount', string>>;

const regions = ['north', 'south', 'east'];
const amounts = ['5', '50', '999', '1000', '1500'];
const rows: Row[] = regions.flatMap((region) => amounts.map((amount) => ({ region, amount })));
/** The filtered columns and two more; any of them may be hidden. */
const columns = ['region', 'amount', 'total', 'cpf'];
/** Now, and either side of every expiry the generators write (+1 min, +60 min, +1 day). */
const instants = [0, 0.5, 1, 1.5, 59, 60, 61, 1440, 1441, 2880].map((minutes) => nowMs + minutes * minute);

interface Query {
  row: Row;
  column: string;
  export: boolean;
  atMs: number;
}

const queries: Query[] = rows.flatMap((row) =>
  columns.flatMap((column) =>
    [false, true].flatMap((exporting) => instants.map((atMs) => ({ row, column, export: exporting, atMs }))),
  ),
);

/**
 * What a filter means for one row: the service stores filters and never applies them (the BI does),
 * so any fixed meaning serves the comparison; this one compares numbers as numbers, other text as text,
 * and reads `in` / `not in` values as comma-separated lists.
 */
function passes(filter: RowFilter, row: Row): boolean {
  const cell = row[filter.column as keyof Row];
  const list = filter.value.split(',');
  const numbers = [Number(cell), Number(filter.value)];
  const order = numbers.every((number) => Number.isFinite(number))
    ? Math.sign((numbers[0] as number) - (numbers[1] as number))
    : cell < filter.value
      ? -1
      : cell > filter.value
        ? 1
        : 0;
  switch (filter.operator) {
    case '=':
      return cell === filter.value;
    case '!=':
      return cell !== filter.value;
    case '>':
      return order > 0;
    case '>=':
      return order >= 0;
    case '<':
      return order < 0;
    case '<=':
      return order <= 0;
    case 'in':
      return list.includes(cell);
    case 'not in':
      return !list.includes(cell);
  }
}

/** `row_filters` as the answer gives them: null is every row, else ALL filters of AT LEAST ONE alternative. */
const rowVisible = (rowFilters: RowFilter[][] | null, row: Row) =>
  rowFilters === null || rowFilters.some((alternative) => alternative.every((filter) => passes(filter, row)));

/** An expiry that does not parse has passed (docs/effective-permissions.md, rule 1). */
const parsed = new Map<string, number>();
const liveAt = (expiresIn: string | null, atMs: number) => {
  if (expiresIn === null) return true;
  let expiresMs = parsed.get(expiresIn);
  if (expiresMs === undefined) parsed.set(expiresIn, (expiresMs = Date.parse(expiresIn)));
  return !Number.isNaN(expiresMs) && expiresMs > atMs;
};

// ---------------------------------------------------------------------------------------------
// The reference: the records, one by one.
// ---------------------------------------------------------------------------------------------

/** One record alone allows the query: it allows, lets the row through, shows the column, exports if asked, is live. */
const recordAllows = (record: PermissionRecord, query: Query) =>
  record.allowed &&
  liveAt(record.expires_in, query.atMs) &&
  record.filters.every((filter) => passes(filter, query.row)) &&
  !record.hidden_columns.includes(query.column) &&
  (!query.export || record.allow_export);

/**
 * The records that count (DESIGN 7, spec 2.4 "individual permissions override group permissions"),
 * decided at `decidedAtMs`: the user's own record alone while it is live, else the groups' records.
 */
function countingRecords(
  user: PermissionRecord | undefined,
  groups: readonly GroupPermissionRecord[],
  decidedAtMs: number,
): readonly PermissionRecord[] {
  if (user !== undefined && liveAt(user.expires_in, decidedAtMs)) return [user];
  return groups;
}

/** The reference: some record that counts allows the query on its own. */
const referenceAllows = (records: readonly PermissionRecord[], query: Query) =>
  records.some((record) => recordAllows(record, query));

/** What the answer's grants allow: ONE grant lets the row through, shows the column, exports if asked, is live. */
const grantsAllow = (answer: EffectivePermission, query: Query) =>
  answer.grants.some(
    (grant) =>
      liveAt(grant.expires_in, query.atMs) &&
      rowVisible(grant.row_filters, query.row) &&
      !grant.hidden_columns.includes(query.column) &&
      (!query.export || grant.allow_export),
  );

/** What the answer's flat fields allow, read as one policy. */
const flatAllows = (answer: EffectivePermission, query: Query) =>
  answer.allowed &&
  liveAt(answer.expires_in, query.atMs) &&
  rowVisible(answer.row_filters, query.row) &&
  !answer.hidden_columns.includes(query.column) &&
  (!query.export || answer.allow_export);

const describeQuery = (query: Query) =>
  `${JSON.stringify(query.row)} column ${query.column}${query.export ? ' (export)' : ''} at now+${(query.atMs - nowMs) / minute} min`;

// ---------------------------------------------------------------------------------------------
// Generators: small pools, so that records overlap, repeat and cross.
// ---------------------------------------------------------------------------------------------

const filter: fc.Arbitrary<RowFilter> = fc.oneof(
  fc.record({
    column: fc.constant('region'),
    operator: fc.constantFrom('=', '!=', '>', '>=', '<', '<='),
    value: fc.constantFrom(...regions),
  }),
  fc.record({
    column: fc.constant('amount'),
    operator: fc.constantFrom('=', '!=', '>', '>=', '<', '<='),
    value: fc.constantFrom(...amounts),
  }),
  fc.record({
    column: fc.constant('region'),
    operator: fc.constantFrom('in', 'not in'),
    value: fc.constantFrom('north,south', 'east', 'south,east'),
  }),
  fc.record({
    column: fc.constant('amount'),
    operator: fc.constantFrom('in', 'not in'),
    value: fc.constantFrom('5,50', '1000', '999,1000,1500'),
  }),
);

/** RFC 3339 text of an instant in one of several offsets, so equal instants have unequal texts. */
function rfc3339(instantMs: number, offsetMinutes: number): string {
  const wallClock = new Date(instantMs + offsetMinutes * minute).toISOString().slice(0, 19);
  if (offsetMinutes === 0) return `${wallClock}Z`;
  const absolute = Math.abs(offsetMinutes);
  const hours = String(Math.floor(absolute / 60)).padStart(2, '0');
  return `${wallClock}${offsetMinutes > 0 ? '+' : '-'}${hours}:${String(absolute % 60).padStart(2, '0')}`;
}

/** No expiry, past (exactly now included), future around the query instants, or text that is no date. */
const expiry: fc.Arbitrary<string | null> = fc.oneof(
  { weight: 3, arbitrary: fc.constant(null) },
  {
    weight: 6,
    arbitrary: fc
      .tuple(fc.constantFrom(-60, 0, 1, 60, 1440), fc.constantFrom(0, 120, -180))
      .map(([minutes, offset]) => rfc3339(nowMs + minutes * minute, offset)),
  },
  { weight: 1, arbitrary: fc.constant('not a date') },
);

const fields = {
  tableId: fc.constant(tableId),
  allow_export: fc.boolean(),
  expires_in: expiry,
  hidden_columns: fc.uniqueArray(fc.constantFrom(...columns), { maxLength: 3 }),
  filters: fc.array(filter, { maxLength: 3 }),
};
/** Mostly allowing: a denying record grants nothing, which is easy; crossings need several allowing ones. */
const allowedMostly = fc.oneof({ weight: 4, arbitrary: fc.constant(true) }, { weight: 1, arbitrary: fc.constant(false) });
const userRecord: fc.Arbitrary<PermissionRecord> = fc.record({ ...fields, allowed: allowedMostly });
const groupRecords: fc.Arbitrary<GroupPermissionRecord[]> = fc
  .uniqueArray(fc.integer({ min: 1, max: 9 }), { maxLength: 5 })
  .chain((groupIds) =>
    fc.tuple(...groupIds.map((groupId) => fc.record({ ...fields, allowed: allowedMostly, groupId: fc.constant(groupId) }))),
  );
/** A user record about a third of the time: with one, the groups do not count. */
const records = fc.tuple(fc.option(userRecord, { nil: undefined, freq: 2 }), groupRecords);

/** Cases per property and run (each run draws new ones). */
const runs = { numRuns: 500 };

describe('effective permissions against the records themselves', () => {
  test('the grants allow exactly what one record that counts allows: each row, column, export, instant', () => {
    fc.assert(
      fc.property(records, ([user, groups]) => {
        const answer = effectivePermission(tableId, user, groups, now);
        // Decided now: the user's own record while it lives, else the groups' (each then at its own expiry).
        const counting = countingRecords(user, groups, nowMs);
        const wrong = queries.find((query) => grantsAllow(answer, query) !== referenceAllows(counting, query));
        if (wrong) expect(grantsAllow(answer, wrong), describeQuery(wrong)).toBe(referenceAllows(counting, wrong));
      }),
      runs,
    );
  });

  test('whatever the grants allow at an instant, the records allow then too (also once the own record has expired)', () => {
    fc.assert(
      fc.property(records, ([user, groups]) => {
        const answer = effectivePermission(tableId, user, groups, now);
        const wrong = queries.find(
          (query) => grantsAllow(answer, query) && !referenceAllows(countingRecords(user, groups, query.atMs), query),
        );
        expect(wrong && describeQuery(wrong)).toBeUndefined();
      }),
      runs,
    );
  });

  test('the flat fields never allow what no record allows', () => {
    fc.assert(
      fc.property(records, ([user, groups]) => {
        const answer = effectivePermission(tableId, user, groups, now);
        const counting = countingRecords(user, groups, nowMs);
        const wrong = queries.find((query) => flatAllows(answer, query) && !referenceAllows(counting, query));
        expect(wrong && describeQuery(wrong)).toBeUndefined();
      }),
      runs,
    );
  });

  test('each grant is one record that counts and allows, named by its source; the flat fields are derived from them', () => {
    fc.assert(
      fc.property(records, ([user, groups]) => {
        const answer = effectivePermission(tableId, user, groups, now);
        const userDecides = user !== undefined && liveAt(user.expires_in, nowMs);
        const expectedSources = userDecides
          ? user.allowed
            ? ['user']
            : []
          : groups
              .filter((group) => group.allowed && liveAt(group.expires_in, nowMs))
              .map((group) => `group ${group.groupId}`)
              .sort();
        const sources = answer.grants.map((grant) => (grant.source === 'user' ? 'user' : `group ${grant.groupId}`));
        expect(sources).toEqual(expectedSources);
        expect(answer.allowed).toBe(answer.grants.length > 0);
        expect(answer.source).toBe(
          userDecides ? 'user' : groups.some((group) => liveAt(group.expires_in, nowMs)) ? 'groups' : 'none',
        );
        if (answer.grants.length === 0) return;
        expect(answer.allow_export).toBe(answer.grants.every((grant) => grant.allow_export));
        expect(answer.hidden_columns).toEqual([...new Set(answer.grants.flatMap((grant) => grant.hidden_columns))].sort());
        const expiries = answer.grants.flatMap((grant) => (grant.expires_in === null ? [] : [Date.parse(grant.expires_in)]));
        expect(answer.expires_in === null ? null : Date.parse(answer.expires_in)).toBe(
          expiries.length === 0 ? null : Math.min(...expiries),
        );
      }),
      runs,
    );
  });
});

describe('the crossing of issue 34, by name', () => {
  // `amount` stands for the issue's `order_id`.
  const from1000: RowFilter = { column: 'amount', operator: '>=', value: '1000' };
  const group = (groupId: number, overrides: Partial<PermissionRecord>): GroupPermissionRecord => ({
    groupId,
    ...(tablePermission(tableId, overrides) as PermissionRecord),
  });

  test('every row without `total`, and `total` only from 1000 on: `total` of a small row is seen by no one', () => {
    const everyRowNoTotal = group(1, { hidden_columns: ['total'] });
    const totalFrom1000 = group(2, { filters: [from1000] });
    const answer = effectivePermission(tableId, undefined, [everyRowNoTotal, totalFrom1000], now);
    expect(answer).toEqual({
      tableId,
      allowed: true,
      allow_export: false,
      expires_in: null,
      hidden_columns: ['total'],
      row_filters: null,
      source: 'groups',
      grants: [
        { source: 'group', groupId: 1, allow_export: false, expires_in: null, hidden_columns: ['total'], row_filters: null },
        { source: 'group', groupId: 2, allow_export: false, expires_in: null, hidden_columns: [], row_filters: [[from1000]] },
      ],
    });
    const small = { region: 'north', amount: '50' };
    const large = { region: 'north', amount: '1500' };
    const at = (row: Row, column: string): Query => ({ row, column, export: false, atMs: nowMs });
    expect(grantsAllow(answer, at(small, 'total'))).toBe(false);
    expect(flatAllows(answer, at(small, 'total'))).toBe(false);
    expect(grantsAllow(answer, at(large, 'total'))).toBe(true);
    expect(grantsAllow(answer, at(small, 'region'))).toBe(true);
    expect(flatAllows(answer, at(small, 'region'))).toBe(true);
  });
});
