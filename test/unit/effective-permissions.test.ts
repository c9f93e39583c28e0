import fc from 'fast-check';
import { describe, expect, test } from 'vitest';
import {
  type EffectivePermission,
  effectivePermission,
  effectivePermissions,
  type Grant,
  type GroupPermissionRecord,
  noAccess,
  type PermissionRecord,
  type RowFilter,
} from '#functions/core/datamarts/effective-permissions.ts';

const now = new Date('2030-06-15T12:00:00Z');
const tableId = 7;

const south: RowFilter = { column: 'region', operator: '=', value: 'south' };
const north: RowFilter = { column: 'region', operator: '=', value: 'north' };
const bigAmount: RowFilter = { column: 'amount', operator: '>=', value: '1000' };
const openStatus: RowFilter = { column: 'status', operator: 'in', value: 'open,pending' };

/** An allowing record with no restrictions; each case states only what it changes. */
function record(overrides: Partial<PermissionRecord> = {}): PermissionRecord {
  return { tableId, allowed: true, allow_export: false, expires_in: null, hidden_columns: [], filters: [], ...overrides };
}

/** The grant group `groupId` gives with an unrestricted record, but for `overrides`. */
function grant(groupId: number, overrides: Partial<Omit<Grant, 'source'>> = {}): Grant {
  return {
    source: 'group',
    groupId,
    allow_export: false,
    expires_in: null,
    hidden_columns: [],
    row_filters: null,
    ...overrides,
  } as Grant;
}

/** Group records as a user's groups hold them: the first is group 1, the next group 2, … */
const ofGroups = (records: readonly PermissionRecord[], firstId = 1): GroupPermissionRecord[] =>
  records.map((one, index) => ({ ...one, groupId: firstId + index }));

/** What the module answers for a table the user may not see, `source` deciding it. */
const noAccessOf = (source: EffectivePermission['source'], id = tableId): EffectivePermission => noAccess(id, source);

// ---------------------------------------------------------------------------------------------
// Generators. Small pools make groups overlap, repeat and collide, which is where combining rules break.
// ---------------------------------------------------------------------------------------------

const columnPool = ['cpf', 'salary', 'email', 'phone'];
const filterPool = [south, north, bigAmount, openStatus];

/**
 * An RFC 3339 text for an instant, written in one of several offsets, with or without milliseconds,
 * so that equal instants often have different texts and string order often differs from instant order.
 */
function rfc3339(instantMs: number, offsetMinutes: number, withMillis: boolean): string {
  const wallClock = new Date(instantMs + offsetMinutes * 60_000).toISOString().slice(0, withMillis ? 23 : 19);
  if (offsetMinutes === 0) return `${wallClock}Z`;
  const sign = offsetMinutes > 0 ? '+' : '-';
  const absolute = Math.abs(offsetMinutes);
  const hours = String(Math.floor(absolute / 60)).padStart(2, '0');
  const minutes = String(absolute % 60).padStart(2, '0');
  return `${wallClock}${sign}${hours}:${minutes}`;
}

const minute = 60_000;
const expiryText = (minutesFromNow: fc.Arbitrary<number>) =>
  fc
    .tuple(minutesFromNow, fc.constantFrom(0, 120, -180, 330, -600), fc.boolean())
    .map(([minutes, offset, withMillis]) => rfc3339(now.getTime() + minutes * minute, offset, withMillis));

/** Past, including exactly now: an access that expires at T is gone at T. */
const pastExpiry = expiryText(fc.constantFrom(-2880, -60, -1, 0));
const futureExpiry = expiryText(fc.constantFrom(1, 60, 1440, 2880));
const liveExpiry = fc.oneof(fc.constant(null), futureExpiry);
const anyExpiry = fc.oneof(fc.constant(null), pastExpiry, futureExpiry);

const recordWith = (expiry: fc.Arbitrary<string | null>, table: fc.Arbitrary<number> = fc.constant(tableId)) =>
  fc.record({
    tableId: table,
    allowed: fc.boolean(),
    allow_export: fc.boolean(),
    expires_in: expiry,
    hidden_columns: fc.array(fc.constantFrom(...columnPool), { maxLength: 5 }),
    filters: fc.array(fc.constantFrom(...filterPool), { maxLength: 3 }),
  });

const anyRecord = recordWith(anyExpiry);
const liveRecord = recordWith(liveExpiry);
const expiredRecord = recordWith(pastExpiry);
const groupRecords = fc.array(anyRecord, { maxLength: 6 }).map((records) => ofGroups(records));

/**
 * `wider` keeps every grant `narrower` has (what a user sees is what one grant shows: see
 * effective-grants.test.ts); anything is at least as much as no access.
 */
function expectAtLeastAsMuchAccess(wider: EffectivePermission, narrower: EffectivePermission): void {
  if (!narrower.allowed) return;
  expect(wider.allowed).toBe(true);
  expect(wider.grants).toEqual(expect.arrayContaining(narrower.grants));
}

describe('properties', () => {
  test('(a) a live individual record always wins: groups make no difference', () => {
    fc.assert(
      fc.property(liveRecord, groupRecords, (user, groups) => {
        expect(effectivePermission(tableId, user, groups, now)).toEqual(effectivePermission(tableId, user, [], now));
      }),
      { numRuns: 500 },
    );
  });

  test('(b) without an individual record, one more group never takes a grant away', () => {
    fc.assert(
      fc.property(groupRecords, anyRecord, (groups, added) => {
        const before = effectivePermission(tableId, undefined, groups, now);
        const after = effectivePermission(tableId, undefined, [...groups, { ...added, groupId: 99 }], now);
        expectAtLeastAsMuchAccess(after, before);
      }),
      { numRuns: 1000 },
    );
  });

  test('(c) an expired group record, whatever it says, changes nothing', () => {
    fc.assert(
      fc.property(
        fc.option(anyRecord, { nil: undefined }),
        groupRecords,
        expiredRecord,
        fc.nat(),
        (user, groups, expired, at) => {
          const position = at % (groups.length + 1);
          const withExpired = [...groups.slice(0, position), { ...expired, groupId: 99 }, ...groups.slice(position)];
          expect(effectivePermission(tableId, user, withExpired, now)).toEqual(effectivePermission(tableId, user, groups, now));
        },
      ),
      { numRuns: 500 },
    );
  });

  test('(c) an expired individual record, whatever it says, is the same as none', () => {
    fc.assert(
      fc.property(expiredRecord, groupRecords, (expired, groups) => {
        expect(effectivePermission(tableId, expired, groups, now)).toEqual(effectivePermission(tableId, undefined, groups, now));
      }),
      { numRuns: 500 },
    );
  });

  test('(d) the order of group records does not matter', () => {
    const groupsAndShuffled = groupRecords.chain((groups) =>
      fc
        .shuffledSubarray(groups, { minLength: groups.length, maxLength: groups.length })
        .map((shuffled) => ({ groups, shuffled })),
    );
    fc.assert(
      fc.property(fc.option(anyRecord, { nil: undefined }), groupsAndShuffled, (user, { groups, shuffled }) => {
        expect(effectivePermission(tableId, user, shuffled, now)).toEqual(effectivePermission(tableId, user, groups, now));
      }),
      { numRuns: 1000 },
    );
  });

  test('effectivePermissions gives, per table, what effectivePermission gives', () => {
    const someTable = fc.constantFrom(1, 2, 3);
    const userRecords = fc.uniqueArray(recordWith(anyExpiry, someTable), { selector: (user) => user.tableId, maxLength: 3 });
    const manyGroupRecords = fc.array(recordWith(anyExpiry, someTable), { maxLength: 8 }).map((records) => ofGroups(records));
    fc.assert(
      fc.property(userRecords, manyGroupRecords, (users, groups) => {
        const mentioned = [...new Set([...users, ...groups].map((entry) => entry.tableId))].sort((a, b) => a - b);
        const expected = mentioned.map((id) =>
          effectivePermission(
            id,
            users.find((user) => user.tableId === id),
            groups.filter((group) => group.tableId === id),
            now,
          ),
        );
        expect(effectivePermissions(users, groups, now)).toEqual(expected);
      }),
      { numRuns: 300 },
    );
  });
});

// ---------------------------------------------------------------------------------------------
// Cases, one field at a time. `expected` lists only the fields the case is about.
// ---------------------------------------------------------------------------------------------

interface Case {
  name: string;
  user?: PermissionRecord;
  groups?: PermissionRecord[];
  expected: Partial<EffectivePermission>;
}

const cases: Record<string, Case[]> = {
  allowed: [
    { name: 'no records at all: no access', expected: noAccessOf('none') },
    { name: 'one allowing group', groups: [record()], expected: { allowed: true, source: 'groups' } },
    {
      name: 'a denying group takes nothing from an allowing one',
      groups: [record({ allowed: false }), record()],
      expected: { allowed: true, source: 'groups' },
    },
    {
      name: 'only denying groups: no access, decided by the groups',
      groups: [record({ allowed: false, allow_export: true, hidden_columns: ['cpf'], filters: [south] })],
      expected: noAccessOf('groups'),
    },
    {
      name: 'individual deny beats group allow',
      user: record({ allowed: false, expires_in: '2030-12-31T00:00:00Z', hidden_columns: ['cpf'], filters: [south] }),
      groups: [record({ allow_export: true })],
      expected: noAccessOf('user'),
    },
    {
      name: 'individual allow beats group deny',
      user: record(),
      groups: [record({ allowed: false })],
      expected: { allowed: true, source: 'user' },
    },
  ],
  allow_export: [
    {
      name: 'export belongs to the grant that gives it; the flat field only if every grant exports',
      groups: [record(), record({ allow_export: true })],
      expected: {
        allow_export: false,
        grants: [grant(1), grant(2, { allow_export: true })],
      },
    },
    {
      name: 'every allowing group exports: so does the flat field',
      groups: [record({ allow_export: true, filters: [south] }), record({ allow_export: true })],
      expected: { allow_export: true },
    },
    {
      name: 'a denying group that "exports" grants nothing: no grant of its own',
      groups: [record(), record({ allowed: false, allow_export: true })],
      expected: { allowed: true, allow_export: false, grants: [grant(1)] },
    },
    {
      name: 'individual without export beats groups with export',
      user: record(),
      groups: [record({ allow_export: true })],
      expected: { allow_export: false, source: 'user' },
    },
    {
      name: 'export without view is no export',
      user: record({ allowed: false, allow_export: true }),
      expected: { allowed: false, allow_export: false },
    },
  ],
  expires_in: [
    {
      name: 'each grant keeps its expiry; the flat field is the earliest',
      groups: [record({ expires_in: '2030-09-01T00:00:00Z' }), record({ expires_in: '2030-07-01T00:00:00Z' })],
      expected: {
        expires_in: '2030-07-01T00:00:00Z',
        grants: [grant(1, { expires_in: '2030-09-01T00:00:00Z' }), grant(2, { expires_in: '2030-07-01T00:00:00Z' })],
      },
    },
    {
      name: 'earliest is by instant, not by text (01:00-05:00 is 06:00Z)',
      groups: [record({ expires_in: '2030-07-01T05:00:00Z' }), record({ expires_in: '2030-07-01T01:00:00-05:00' })],
      expected: { expires_in: '2030-07-01T05:00:00Z' },
    },
    {
      name: 'a group with no expiry does not make the flat field unexpiring: its own grant is',
      groups: [record({ expires_in: '2030-07-01T00:00:00Z' }), record({ expires_in: null })],
      expected: { expires_in: '2030-07-01T00:00:00Z', grants: [grant(1, { expires_in: '2030-07-01T00:00:00Z' }), grant(2)] },
    },
    {
      name: 'no grant expires: neither does the flat field',
      groups: [record(), record({ filters: [south] })],
      expected: { expires_in: null },
    },
    {
      name: "a denying group's expiry does not shorten the access",
      groups: [record({ expires_in: null }), record({ allowed: false, expires_in: '2030-07-01T00:00:00Z' })],
      expected: { expires_in: null },
    },
    {
      name: 'an individual record keeps its own expiry',
      user: record({ expires_in: '2030-07-01T00:00:00Z' }),
      groups: [record({ expires_in: null })],
      expected: { expires_in: '2030-07-01T00:00:00Z', source: 'user' },
    },
    {
      name: 'expired is by instant, not by text (13:00+02:00 is 11:00Z, before now)',
      groups: [record({ expires_in: '2030-06-15T13:00:00+02:00' })],
      expected: noAccessOf('none'),
    },
    {
      name: 'a record expiring exactly now is expired',
      groups: [record({ expires_in: '2030-06-15T12:00:00Z' })],
      expected: noAccessOf('none'),
    },
    {
      name: 'an expiry that does not parse counts as expired',
      groups: [record({ expires_in: 'next tuesday' })],
      expected: noAccessOf('none'),
    },
    {
      name: 'an expired individual record falls back to the groups',
      user: record({ allowed: false, expires_in: '2030-06-01T00:00:00Z' }),
      groups: [record({ allow_export: true })],
      expected: { allowed: true, allow_export: true, source: 'groups' },
    },
    {
      name: 'an expired group is ignored',
      groups: [record({ expires_in: '2030-06-01T00:00:00Z', allow_export: true }), record({ allow_export: true })],
      expected: { allowed: true, allow_export: true, grants: [grant(2, { allow_export: true })] },
    },
  ],
  hidden_columns: [
    {
      name: 'each grant keeps its hidden columns; the flat field hides every column some grant hides',
      groups: [record({ hidden_columns: ['cpf', 'salary'] }), record({ hidden_columns: ['salary', 'email'] })],
      expected: {
        hidden_columns: ['cpf', 'email', 'salary'],
        grants: [grant(1, { hidden_columns: ['cpf', 'salary'] }), grant(2, { hidden_columns: ['email', 'salary'] })],
      },
    },
    {
      name: 'a group that hides nothing shows everything through its own grant only',
      groups: [record({ hidden_columns: ['cpf', 'salary'] }), record({ hidden_columns: [], filters: [south] })],
      expected: {
        hidden_columns: ['cpf', 'salary'],
        row_filters: null,
        grants: [grant(1, { hidden_columns: ['cpf', 'salary'] }), grant(2, { row_filters: [[south]] })],
      },
    },
    {
      name: "a denying group's hidden columns do not count",
      groups: [record({ hidden_columns: ['cpf'] }), record({ allowed: false, hidden_columns: ['email'] })],
      expected: { hidden_columns: ['cpf'] },
    },
    {
      name: 'repeats are dropped and the list is sorted',
      groups: [record({ hidden_columns: ['salary', 'cpf', 'salary'] }), record({ hidden_columns: ['cpf', 'salary'] })],
      expected: { hidden_columns: ['cpf', 'salary'] },
    },
    {
      name: 'an individual record keeps its own hidden columns, sorted and without repeats',
      user: record({ hidden_columns: ['salary', 'cpf', 'salary'] }),
      groups: [record()],
      expected: { hidden_columns: ['cpf', 'salary'] },
    },
  ],
  row_filters: [
    {
      name: "two groups' filters combine with OR, and each stays with its grant",
      groups: [record({ filters: [south] }), record({ filters: [bigAmount] })],
      expected: {
        row_filters: [[bigAmount], [south]],
        grants: [grant(1, { row_filters: [[south]] }), grant(2, { row_filters: [[bigAmount]] })],
      },
    },
    {
      name: "one group's filters stay ANDed",
      groups: [record({ filters: [south, bigAmount] }), record({ filters: [north] })],
      expected: { row_filters: [[bigAmount, south], [north]] },
    },
    {
      name: 'a group without filters sees every row',
      groups: [record({ filters: [south] }), record({ filters: [] })],
      expected: { row_filters: null },
    },
    {
      name: "a denying group's missing filters open no rows",
      groups: [record({ filters: [south] }), record({ allowed: false, filters: [] })],
      expected: { row_filters: [[south]] },
    },
    {
      name: 'identical alternatives appear once, whatever the order of their filters',
      groups: [record({ filters: [south, bigAmount] }), record({ filters: [bigAmount, south, south] })],
      expected: { row_filters: [[bigAmount, south]] },
    },
    {
      name: "an individual record's filters are the only alternative, and its grant the only one",
      user: record({ filters: [south, openStatus], allow_export: true, hidden_columns: ['cpf'] }),
      groups: [record()],
      expected: {
        row_filters: [[south, openStatus]],
        source: 'user',
        grants: [
          {
            source: 'user',
            allow_export: true,
            expires_in: null,
            hidden_columns: ['cpf'],
            row_filters: [[south, openStatus]],
          },
        ],
      },
    },
    {
      name: 'an individual record without filters sees every row',
      user: record(),
      groups: [record({ filters: [south] })],
      expected: { row_filters: null, source: 'user' },
    },
  ],
};

describe.each(Object.entries(cases))('%s', (_field, fieldCases) => {
  test.each(fieldCases)('$name', ({ user, groups = [], expected }) => {
    expect(effectivePermission(tableId, user, ofGroups(groups), now)).toMatchObject(expected);
  });
});

describe('effectivePermission, other inputs', () => {
  test('records of other tables are ignored', () => {
    const otherTable = record({ tableId: tableId + 1, allow_export: true });
    expect(effectivePermission(tableId, otherTable, ofGroups([otherTable]), now)).toEqual(noAccessOf('none'));
  });

  test('an invalid now is refused', () => {
    expect(() => effectivePermission(tableId, undefined, ofGroups([record()]), new Date(Number.NaN))).toThrow(RangeError);
  });

  test('inputs are not changed and the result shares no arrays with them', () => {
    const user = record({ hidden_columns: ['salary', 'cpf'], filters: [south, bigAmount] });
    const frozen = structuredClone(user);
    const result = effectivePermission(tableId, user, [], now);
    expect(user).toEqual(frozen);
    expect(result.hidden_columns).not.toBe(user.hidden_columns);
    expect(result.row_filters?.[0]).not.toBe(user.filters);
    expect(result.row_filters?.[0]?.[0]).not.toBe(user.filters[1]);
    expect(result.grants[0]?.hidden_columns).not.toBe(user.hidden_columns);
    expect(result.grants[0]?.row_filters?.[0]?.[0]).not.toBe(user.filters[1]);
  });
});

describe('effectivePermissions', () => {
  test('one result per table mentioned, sorted by tableId', () => {
    const users = [
      record({ tableId: 3, allowed: false }),
      record({ tableId: 1, hidden_columns: ['cpf'] }),
      record({ tableId: 4, expires_in: '2030-01-01T00:00:00Z' }),
    ];
    const groups = [
      record({ tableId: 3, allow_export: true }),
      record({ tableId: 2, filters: [south] }),
      record({ tableId: 2, filters: [bigAmount], allow_export: true, expires_in: '2030-08-01T00:00:00Z' }),
      record({ tableId: 5, expires_in: '2030-01-01T00:00:00Z' }),
    ];
    expect(effectivePermissions(users, ofGroups(groups), now)).toEqual([
      {
        tableId: 1,
        allowed: true,
        allow_export: false,
        expires_in: null,
        hidden_columns: ['cpf'],
        row_filters: null,
        source: 'user',
        grants: [{ source: 'user', allow_export: false, expires_in: null, hidden_columns: ['cpf'], row_filters: null }],
      },
      {
        tableId: 2,
        allowed: true,
        allow_export: false,
        expires_in: '2030-08-01T00:00:00Z',
        hidden_columns: [],
        row_filters: [[bigAmount], [south]],
        source: 'groups',
        grants: [
          grant(2, { row_filters: [[south]] }),
          grant(3, { row_filters: [[bigAmount]], allow_export: true, expires_in: '2030-08-01T00:00:00Z' }),
        ],
      },
      noAccessOf('user', 3),
      noAccessOf('none', 4),
      noAccessOf('none', 5),
    ]);
  });

  test('no records, no results', () => {
    expect(effectivePermissions([], [], now)).toEqual([]);
  });

  test('two user records for one table are refused', () => {
    expect(() => effectivePermissions([record({ tableId: 1 }), record({ tableId: 1, allowed: false })], [], now)).toThrow(
      'More than one user permission record for table 1',
    );
  });
});
