/**
 * The quotas that bound what a read answers (functions/core/directory/quotas.ts) hold under
 * concurrency: each is a count that the writing transaction conditions on, never read and then
 * written. Run here against DynamoDB Local with small maximums (the repositories take them), many
 * writes at once; and the counts stay exact through deletions and the sweeps that meet on one item.
 */
import { describe, expect, test } from 'vitest';
import {
  type PermissionLedger,
  deleteSubjectRecords,
  listIndexedPermissions,
  replacePermissionRecords,
} from '#functions/core/datamarts/datamart-repository.ts';
import { type PermissionRecord, permissionCharge } from '#functions/core/datamarts/effective-permissions.ts';
import { permissionLedger } from '#functions/core/datamarts/ledger.ts';
import {
  deleteGroupMemberships,
  deleteGroupRecord,
  deleteMembership,
  deleteUserMemberships,
  findCount,
  findGroupPermissionBytes,
  groupPermissionCharge,
  insertGroup,
  insertMembership,
  listMemberships,
} from '#functions/core/directory/directory-repository.ts';
import { deleteAll, getItem, putAll, queryAll } from '#functions/core/store/dynamo.ts';
import * as stored from '#functions/core/store/entity-declarations.ts';
import { tablePermission } from '#test/support/permissions.ts';

/** A tenant id of its own: the repositories need no tenant item. */
const freshTenant = () => 2_000_000_000 + Math.floor(Math.random() * 1_000_000_000);
const at = <T>(count: number, make: (index: number) => Promise<T>) =>
  Promise.all(Array.from({ length: count }, (_, index) => make(index)));
const tally = <T extends string | boolean>(values: T[]) =>
  values.reduce<Record<string, number>>(
    (counts, value) => ({ ...counts, [String(value)]: (counts[String(value)] ?? 0) + 1 }),
    {},
  );
const deleteItem = (key: { pk: string; sk: string }) => deleteAll([key]);
const group = (tenantId: number, groupId: number) => ({ groupId, tenantId, nome: `G${groupId}`, createdAt: '' });

describe('groups per tenant', () => {
  test('30 creations at once where 10 fit: exactly 10, and a deletion frees one place', async () => {
    const tenantId = freshTenant();
    const written = await at(30, (index) => insertGroup(group(tenantId, index + 1), [], 10));
    expect(tally(written)).toEqual({ true: 10, false: 20 });
    expect(await queryAll(stored.group.partition({ tenantId }), stored.group.keyPrefix({}))).toHaveLength(10);
    expect(await findCount(tenantId, 'GROUPS')).toBe(10);
    const kept = written.flatMap((ok, index) => (ok ? [index + 1] : []));
    expect(await deleteGroupRecord(tenantId, kept[0] as number, [])).toBe(true);
    expect(await deleteGroupRecord(tenantId, kept[0] as number, [])).toBe(false);
    expect(tally(await at(5, (index) => insertGroup(group(tenantId, 100 + index), [], 10)))).toEqual({ true: 1, false: 4 });
  });
});

describe('memberships per tenant', () => {
  async function directory(users: number, groups: number) {
    const tenantId = freshTenant();
    await putAll([
      ...Array.from({ length: users }, (_, index) => ({
        ...stored.user.key({ tenantId, userId: index + 1 }),
        userId: index + 1,
        tenantId,
      })),
      ...Array.from({ length: groups }, (_, index) => ({
        ...group(tenantId, index + 1),
        ...stored.group.key({ tenantId, groupId: index + 1 }),
      })),
    ]);
    return tenantId;
  }

  test('30 at once where 10 fit: exactly 10; one there already is no new one, even at the quota', async () => {
    const tenantId = await directory(30, 1);
    const outcomes = await at(30, (index) => insertMembership(tenantId, 1, index + 1, 10));
    expect(tally(outcomes)).toEqual({ written: 10, limit: 20 });
    const member = outcomes.indexOf('written') + 1;
    expect(await insertMembership(tenantId, 1, member, 10)).toBe('exists');
    expect(await insertMembership(tenantId, 2, member, 10)).toBe('missing');
    expect(await findCount(tenantId, 'MEMBERSHIPS')).toBe(10);
  });

  test("a user's sweep and a group's sweep at once, with removals: the count ends equal to the memberships left", async () => {
    const tenantId = await directory(40, 5);
    const pairs = Array.from({ length: 40 * 5 }, (_, index) => ({
      userId: (index % 40) + 1,
      groupId: Math.floor(index / 40) + 1,
    }));
    expect(
      tally(
        await at(pairs.length, (index) =>
          insertMembership(tenantId, pairs[index]?.groupId as number, pairs[index]?.userId as number, 1_000),
        ),
      ),
    ).toEqual({ written: 200 });
    await Promise.all([
      deleteGroupMemberships(tenantId, 1),
      deleteUserMemberships(tenantId, 1),
      deleteUserMemberships(tenantId, 2),
      ...Array.from({ length: 10 }, (_, index) => deleteMembership(tenantId, 1, index + 3)),
      ...Array.from({ length: 10 }, (_, index) => deleteMembership(tenantId, 2, index + 3)),
    ]);
    const left = await listMemberships(tenantId);
    // Group 1 (40), users 1 and 2 elsewhere (2 × 4), ten more of group 2.
    expect(left).toHaveLength(200 - 40 - 8 - 10);
    expect(await findCount(tenantId, 'MEMBERSHIPS')).toBe(left.length);
  });
});

describe("the group permission records' charge to the tenant", () => {
  test('20 groups write records at once against a budget of 5 records: exactly 5; the sweeps give back exactly', async () => {
    const tenantId = freshTenant();
    const datamartId = 1;
    const groups = Array.from({ length: 20 }, (_, index) => index + 1);
    // The groups with their count, as their creations keep it.
    await putAll([
      ...groups.map((groupId) => ({ ...group(tenantId, groupId), ...stored.group.key({ tenantId, groupId }) })),
      { ...stored.tenantCount.key({ tenantId, name: 'GROUPS' }), value: groups.length },
    ]);
    const record = (groupId: number) =>
      tablePermission(7, { filters: [{ column: 'region', operator: '=', value: `${groupId}`.padStart(4, '0') }] });
    const charge = permissionCharge(datamartId, record(1));
    const max = 5 * charge;
    const ledger: PermissionLedger = {
      charge: (_subject, subjectId, delta) => groupPermissionCharge(tenantId, subjectId, delta, max),
      release: (_subject, subjectId, delta) => groupPermissionCharge(tenantId, subjectId, delta, max, false),
    };
    const outcomes = await at(groups.length, (index) =>
      replacePermissionRecords(
        tenantId,
        datamartId,
        'group',
        groups[index] as number,
        [record(groups[index] as number)],
        [],
        ledger,
      ),
    );
    expect(tally(outcomes.map((outcome) => (outcome.written ? 'written' : outcome.refused)))).toEqual({
      written: 5,
      subject: 15,
    });
    expect(await findGroupPermissionBytes(tenantId)).toBe(5 * charge);
    // A group deleted meanwhile gets no record: its condition fails with the charge's.
    const refusedGroup = groups[outcomes.findIndex((outcome) => !outcome.written)] as number;
    await deleteGroupRecord(tenantId, refusedGroup, []);
    const gone = await replacePermissionRecords(tenantId, datamartId, 'group', refusedGroup, [record(refusedGroup)], [], ledger);
    expect(gone).toEqual({ written: false, refused: 'subject' });
    // Sweeps of the same groups at once give each record's charge back once.
    const writers = groups.filter((_, index) => outcomes[index]?.written);
    await at(writers.length * 2, (index) =>
      deleteSubjectRecords(tenantId, 'group', writers[index % writers.length] as number, ledger),
    );
    expect(await listIndexedPermissions(tenantId, 'group')).toEqual([]);
    expect(await findGroupPermissionBytes(tenantId)).toBe(0);
  });

  test("a user's own records: charged to the user item, given back when replaced, and none written once the user is gone", async () => {
    const tenantId = freshTenant();
    await putAll([{ ...stored.user.key({ tenantId, userId: 1 }), userId: 1, tenantId }]);
    const ledger = permissionLedger(tenantId);
    const permBytes = async () => (await getItem<{ permBytes?: number }>(stored.user.key({ tenantId, userId: 1 })))?.permBytes;
    const records = [tablePermission(7), tablePermission(8, { hidden_columns: ['cpf'] })];
    const first = await replacePermissionRecords(tenantId, 1, 'user', 1, records, [], ledger);
    if (!first.written) throw new Error('not written');
    expect(await permBytes()).toBe(records.reduce((sum, one) => sum + permissionCharge(1, one), 0));
    // Replaced by one record: the other's charge given back, in the same transaction.
    const second = await replacePermissionRecords(tenantId, 1, 'user', 1, [records[0] as PermissionRecord], first.stored, ledger);
    if (!second.written) throw new Error('not written');
    expect(await permBytes()).toBe(permissionCharge(1, records[0] as PermissionRecord));
    // A replace from a stale read (the records it read are gone) is refused, not counted twice.
    expect(await replacePermissionRecords(tenantId, 1, 'user', 1, records, first.stored, ledger)).toEqual({
      written: false,
      refused: 'records',
    });
    await deleteItem(stored.user.key({ tenantId, userId: 1 }));
    expect(await replacePermissionRecords(tenantId, 1, 'user', 1, [], second.stored, ledger)).toEqual({
      written: false,
      refused: 'subject',
    });
  });
});
