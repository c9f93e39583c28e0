/**
 * Every answer fits in one Lambda result (6 MB as it travels): lists are measured item by item and
 * stop at the first item that does not fit, with a `limit` that works; and one item (a user with
 * their groups and effective permissions) can never pass the bound, whatever a tenant writes within
 * its quotas: the worst case is worked out here from the quotas and the schemas' bounds.
 */
import fc from 'fast-check';
import { describe, expect, test } from 'vitest';
import { answerBytes, listAnswer, maxAnswerBytes, maxResultBytes } from '#functions/core/api/whole-list.ts';
import {
  type PermissionRecord,
  effectivePermissions,
  permissionCharge,
} from '#functions/core/datamarts/effective-permissions.ts';
import {
  maxGroupPermissionBytes,
  maxGroupsPerTenant,
  maxMembershipsPerTenant,
  maxUserPermissionBytes,
} from '#functions/core/directory/quotas.ts';
import { ServiceError } from '#functions/core/errors.ts';

const refusal = (call: () => unknown): ServiceError => {
  try {
    call();
  } catch (error) {
    if (error instanceof ServiceError) return error;
    throw error;
  }
  throw new Error('no refusal');
};

/** The body as it travels: its JSON, escaped once more inside the result. */
const travelling = (value: unknown) => Buffer.byteLength(JSON.stringify(JSON.stringify(value))) - 2;

describe('answerBytes', () => {
  test('is the size of the body as it travels, for any JSON (escapes, control characters, astral characters)', () => {
    fc.assert(
      fc.property(fc.jsonValue(), (value) => {
        expect(answerBytes(value)).toBe(travelling(value));
      }),
    );
    const nasty = { text: '"\\\n\u0001\u2028😀é', list: ['"', null, 1.5] };
    expect(answerBytes(nasty)).toBe(travelling(nasty));
  });
});

describe('lists are measured item by item, and stop at the first that does not fit', () => {
  const megabyteItems = (count: number, built: { count: number }) =>
    (function* () {
      for (let index = 0; index < count; index++) {
        built.count++;
        yield { id: index, text: 'x'.repeat(1024 * 1024) };
      }
    })();

  test('500 items of 1 MB: refused after building 7 of them, never the whole; the limit it names fits', () => {
    const built = { count: 0 };
    const error = refusal(() => listAnswer({ items: megabyteItems(500, built), count: 500, nextCursor: null }, undefined));
    expect(built.count).toBeLessThanOrEqual(7);
    expect(error).toMatchObject({ status: 400, code: 'answer_too_large', errors: [{ location: 'query', pointer: '/limit' }] });
    expect(error.message).toMatch(/^The whole list \(500 items, over 6\.\d MB\).*send limit=5 or less/);
    const limit = Number(/limit=(\d+)/.exec(error.message)?.[1]);
    const page = listAnswer({ items: megabyteItems(limit, { count: 0 }), nextCursor: 'next' }, limit);
    expect(page.data).toHaveLength(limit);
    expect(answerBytes(page)).toBeLessThanOrEqual(maxAnswerBytes);
  });

  test('a page too large names the smaller limit that fits', () => {
    const error = refusal(() => listAnswer({ items: megabyteItems(10, { count: 0 }), count: 10, nextCursor: 'n' }, 10));
    expect(error.message).toMatch(/^This page \(10 items, over 6\.\d MB\).*send limit=5 or less/);
  });

  test('one item too large alone is said to be so, not answered with a smaller limit that cannot exist', () => {
    const huge = { id: 12, text: 'x'.repeat(7 * 1024 * 1024) };
    const page = refusal(() => listAnswer({ items: [huge], nextCursor: null }, 1, (item) => `user ${item.id}`));
    expect(page.message).toMatch(/^This page \(1 item, 7\.0 MB\).*user 12 alone is.*quotas/);
    expect(page.message).not.toMatch(/smaller limit/);
  });

  test('within the bound: the spec shape, exactly', () => {
    expect(listAnswer({ items: [{ id: 1 }], nextCursor: null }, undefined)).toEqual({ status: 'success', data: [{ id: 1 }] });
  });
});

/** The worst text of `length` characters as it travels: `"` doubles twice (4 bytes), a control character takes 7. */
const worstName = (length: number) => '"'.repeat(length);
const worstValue = (length: number) => '\u0001'.repeat(length);
const maxId = Number.MAX_SAFE_INTEGER;

describe('one item always fits: the quotas bound a user with their groups and effective permissions', () => {
  const filter = fc.record({
    column: fc.constantFrom('a', '"b"', 'c\\d'),
    operator: fc.constantFrom('=', '>=', 'in', 'not in'),
    value: fc.oneof(fc.string({ maxLength: 20 }), fc.constantFrom('"', '\u0001\u0002', '😀')),
  });
  const record = fc.record({
    tableId: fc.integer({ min: 1, max: 4 }),
    allowed: fc.boolean(),
    allow_export: fc.boolean(),
    // The longest the schema takes (40 characters) among them.
    expires_in: fc.constantFrom(
      null,
      '2031-01-01T00:00:00Z',
      '2031-01-01T00:00:00.123456789+05:30',
      '2031-01-01T00:00:00.12345678901234+05:30',
      '2020-01-01T00:00:00Z',
    ),
    hidden_columns: fc.uniqueArray(fc.constantFrom('a', '"b"', 'c\\d', 'e'), { maxLength: 4 }),
    filters: fc.array(filter, { maxLength: 4 }),
  });

  // A group's record names its group in the grant it gives: any id, the longest too.
  const groupRecord = fc
    .tuple(record, fc.oneof(fc.integer({ min: 1, max: maxId }), fc.constant(maxId)))
    .map(([one, groupId]) => ({ ...one, groupId }));

  test("a user's effective permissions on a datamart never take more than the charges of the records they come from", () => {
    const now = new Date('2030-06-15T12:00:00Z');
    fc.assert(
      fc.property(
        fc.uniqueArray(record, { maxLength: 4, selector: (candidate) => candidate.tableId }),
        fc.array(groupRecord, { maxLength: 12 }),
        fc.integer({ min: 1, max: maxId }),
        (own, groups, datamartId) => {
          // Each entry: the flat fields (hidden columns and row filters of every grant) and the grants themselves.
          const entries = effectivePermissions(own, groups, now).map((permission) => ({ datamartId, ...permission }));
          const charges = [...own, ...groups].reduce((sum, one) => sum + permissionCharge(datamartId, one), 0);
          // The entries inside the user's `permissions` array: its brackets are the user's fixed part.
          expect(answerBytes(entries) - 2).toBeLessThanOrEqual(charges);
        },
      ),
    );
  });

  test('the worst user the quotas allow, with the worst page around it, is under 6 MB as it travels', () => {
    // The user's own fields at the schemas' bounds, with the worst characters.
    const user = { id: maxId, nome: worstName(200), login: worstName(200), email: `${worstName(249)}@a.io` };
    // In every group the tenant may have (a user is in each group once), each with the worst name.
    const groups = Array.from({ length: maxGroupsPerTenant }, () => ({ id: maxId, nome: worstName(200) }));
    const item = { ...user, groups, permissions: [] };
    // A page's cursor: the last evaluated key, each of its values under 512 characters, base64url.
    const cursor = Buffer.from(JSON.stringify({ pk: 'x'.repeat(511), sk: 'x'.repeat(511) })).toString('base64url');
    const page = { status: 'success', data: [item], nextCursor: cursor };
    // The permissions are at most the charges of the user's own records and of every group record.
    const worst = answerBytes(page) + maxUserPermissionBytes + maxGroupPermissionBytes;
    expect(worst).toBeLessThanOrEqual(maxAnswerBytes);
    expect(maxAnswerBytes).toBeLessThan(maxResultBytes);
    // The slack left, for the record.
    expect(maxAnswerBytes - worst).toBeGreaterThan(100 * 1024);
  });

  test('a record at the schema bounds is charged what it can add (twice its contents: in the flat fields and in its grant), so the budgets hold only a few of them', () => {
    const record: PermissionRecord = {
      tableId: maxId,
      allowed: true,
      allow_export: true,
      expires_in: '2031-01-01T00:00:00.123456789+05:30',
      hidden_columns: Array.from({ length: 500 }, (_, index) => `${worstName(60)}${index}`),
      filters: Array.from({ length: 50 }, (_, index) => ({
        column: worstName(63),
        operator: 'not in',
        value: `${worstValue(999)}${index % 10}`,
      })),
    };
    const charge = permissionCharge(maxId, record);
    const asOwn = effectivePermissions([record], [], new Date(0))[0];
    const asGroups = effectivePermissions([], [{ ...record, groupId: maxId }], new Date(0))[0];
    expect(asOwn?.grants).toHaveLength(1);
    expect(asGroups?.grants).toHaveLength(1);
    for (const entry of [asOwn, asGroups]) {
      expect(charge).toBeGreaterThanOrEqual(answerBytes([{ datamartId: maxId, ...entry }]) - 2 + 1);
    }
    // Each of its hidden columns and filters is carried twice (flat fields and grant): about 0.93 MB.
    expect(charge).toBeLessThan(1024 * 1024);
    expect(Math.floor(maxGroupPermissionBytes / charge)).toBeGreaterThanOrEqual(4);
    expect(Math.floor(maxUserPermissionBytes / charge)).toBeGreaterThanOrEqual(1);
  });

  test('the list of groups, and one group, at the quotas: under 6 MB as they travel', () => {
    const members = Array.from({ length: maxMembershipsPerTenant }, () => maxId);
    const groups = Array.from({ length: maxGroupsPerTenant }, (_, index) => ({
      id: maxId,
      nome: worstName(200),
      members: index === 0 ? members : [],
    }));
    expect(answerBytes({ status: 'success', data: groups })).toBeLessThanOrEqual(maxAnswerBytes);
  });
});
