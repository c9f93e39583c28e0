import {
  deleteSubjectRecords,
  listDatamartTables,
  listIndexedPermissions,
  type StoredPermission,
} from '#functions/core/datamarts/datamart-repository.ts';
import {
  type AccessContext,
  type DatamartPermission,
  effectiveAccess,
  readAccessContext,
} from '#functions/core/datamarts/permissions.ts';
import type { ListSource } from '#functions/core/api/whole-list.ts';
import { invalidCursor } from '#functions/core/store/dynamo.ts';
import { permissionLedger } from '#functions/core/datamarts/ledger.ts';
import { deleteGroup } from './groups.ts';
import {
  deleteGroupMemberships,
  deleteUserMemberships,
  findGroups,
  findUserByLogin,
  listMemberships,
  listUserMemberships,
  listUsers,
  type MembershipRecord,
  type UserRecord,
} from './directory-repository.ts';
import { deleteFollowUp } from '#functions/core/follow-ups/follow-up-repository.ts';
import { deleteUser, describeUser, requireUser } from './users.ts';

/**
 * A user as GET /tenant/users shows them (spec 4.10): `id, nome, login`, their groups, and their
 * effective permissions per datamart table (DESIGN 7).
 */
export type UserWithAccess = ReturnType<typeof describeUser> & {
  groups: Array<{ id: number; nome: string }>;
  permissions: DatamartPermission[];
};

/**
 * The users as GET /tenant/users shows them, from what was read, each built only when the answer
 * takes it (listAnswer measures them one by one and stops at the first that does not fit).
 */
function* describeUsers(
  users: readonly UserRecord[],
  userRecords: readonly StoredPermission[],
  memberships: readonly MembershipRecord[],
  context: AccessContext,
): Generator<UserWithAccess> {
  const accessOf = effectiveAccess(userRecords, memberships, context);
  const groupNames = new Map(context.groups.map((group) => [group.groupId, group.nome]));
  const groupsOf = new Map<number, Array<{ id: number; nome: string }>>();
  for (const { userId, groupId } of memberships) {
    const nome = groupNames.get(groupId);
    if (nome === undefined) continue; // A membership of a group being swept counts for nothing.
    const groups = groupsOf.get(userId);
    if (groups) groups.push({ id: groupId, nome });
    else groupsOf.set(userId, [{ id: groupId, nome }]);
  }
  for (const user of users) {
    yield { ...describeUser(user), groups: groupsOf.get(user.userId) ?? [], permissions: accessOf(user.userId) };
  }
}

/** A page of users with their access: built one at a time as the answer takes them (`count` says how many). */
export type UsersWithAccess = ListSource<UserWithAccess> & { count: number };

/**
 * GET /tenant/users (spec 4.10): every user, or a page of `limit`, with groups and effective
 * permissions. First level, together: the users, the memberships, the groups, every group's records
 * and the datamarts (and, for the whole list, every user's records); second: the page's users'
 * records (one Query of the permission index over their ids).
 */
export async function listUsersWithAccess(
  tenantId: number,
  limit: number | undefined,
  cursor: string | undefined,
): Promise<UsersWithAccess> {
  const [page, memberships, context, everyUsersRecords] = await Promise.all([
    listUsers(tenantId, limit, cursor),
    listMemberships(tenantId),
    readAccessContext(tenantId),
    limit === undefined ? listIndexedPermissions(tenantId, 'user') : undefined,
  ]);
  const first = page.items[0];
  const last = page.items.at(-1);
  const userRecords =
    everyUsersRecords ?? (first && last ? await listIndexedPermissions(tenantId, 'user', first.userId, last.userId) : []);
  return {
    items: describeUsers(page.items, userRecords, memberships, context),
    count: page.items.length,
    nextCursor: page.nextCursor,
  };
}

/**
 * GET /tenant/users?login=: the user whose login a reader cannot tell from `login`, as a list of one
 * (or none): the login's uniqueness claim names the user (names.ts `foldedText`, as logins are
 * claimed), so it is read with two GetItems, then that user's memberships and records, never the
 * whole list. Such a list never has a next page: no cursor is one of its own.
 */
export async function listUsersWithAccessByLogin(
  tenantId: number,
  login: string,
  cursor: string | undefined,
): Promise<UsersWithAccess> {
  if (cursor !== undefined) throw invalidCursor();
  const context = readAccessContext(tenantId);
  const user = await findUserByLogin(tenantId, login);
  if (!user) return { items: [], count: 0, nextCursor: null };
  const [memberships, userRecords] = await Promise.all([
    listUserMemberships(tenantId, user.userId),
    listIndexedPermissions(tenantId, 'user', user.userId),
  ]);
  return { items: describeUsers([user], userRecords, memberships, await context), count: 1, nextCursor: null };
}

/**
 * GET /tenant/users/{id}: what the answer needs and no more, whatever the tenant's other groups hold.
 * First level, together: the user, their memberships, their records and the datamarts' tables; then
 * their groups (by key) and those groups' records (`groupRecordQueries`). The access context is
 * theirs alone: the tenant's other groups and their records, which count for nothing in the answer,
 * are not read, so the reads grow with the user's groups, not the tenant's.
 */
export async function describeUserWithAccess(tenantId: number, userId: number): Promise<UserWithAccess> {
  const [user, memberships, userRecords, datamarts] = await Promise.all([
    requireUser(tenantId, userId),
    listUserMemberships(tenantId, userId),
    listIndexedPermissions(tenantId, 'user', userId),
    listDatamartTables(tenantId),
  ]);
  const groupIds = memberships.map((membership) => membership.groupId);
  // A second level, which must wait: the groups and their records are keyed by group id (`GROUP#`, and
  // `G#<groupId>#` in the permission index), and the user's group ids are known only from their
  // memberships. The reads that need no ids, every group and every group's records (what GET
  // /tenant/users reads), grow with the tenant's groups: at 100x data about 800 items more than these.
  const [groups, groupRecords] = await Promise.all([
    findGroups(tenantId, groupIds),
    Promise.all(
      idRanges(groupIds, groupRecordQueries).map(([first, last]) => listIndexedPermissions(tenantId, 'group', first, last)),
    ),
  ]);
  const [described] = describeUsers([user], userRecords, memberships, { groups, groupRecords: groupRecords.flat(), datamarts });
  return described as UserWithAccess;
}

/**
 * The most Queries of the permission index that read one user's groups' records, in parallel, each
 * over a range of group ids (`idRanges`): a user in at most this many groups reads exactly their
 * groups' records; one in more reads them in this many Queries, with the records of the groups whose
 * ids lie in the narrower gaps between theirs: never more than every group's records.
 */
export const groupRecordQueries = 8;

/**
 * The ids as at most `most` ranges [first, last] that cover them all, in order: each id alone when
 * they are few enough, else split at the `most - 1` widest gaps between consecutive ids (so that the
 * ranges take in as few ids that are not given as they can).
 */
export function idRanges(ids: readonly number[], most: number): Array<[number, number]> {
  const sorted = [...new Set(ids)].sort((a, b) => a - b);
  if (sorted.length === 0) return [];
  // Where each range ends: after the widest gaps, and at the last id.
  const ends = sorted
    .slice(1)
    .map((id, index) => ({ index, width: id - (sorted[index] as number) }))
    .sort((a, b) => b.width - a.width || a.index - b.index)
    .slice(0, Math.max(0, most - 1))
    .map((gap) => gap.index)
    .concat(sorted.length - 1)
    .sort((a, b) => a - b);
  let start = 0;
  return ends.map((end) => {
    const range: [number, number] = [sorted[start] as number, sorted[end] as number];
    start = end + 1;
    return range;
  });
}

/** Unlinks a user, then sweeps what it leaves (the follow-up sweeper does, if this request stops first). */
export async function removeUser(tenantId: number, userId: number): Promise<void> {
  await deleteUser(tenantId, userId);
  await sweepUser(tenantId, userId);
}

/** Removes a group, then sweeps what it leaves (the follow-up sweeper does, if this request stops first). */
export async function removeGroup(tenantId: number, groupId: number): Promise<void> {
  await deleteGroup(tenantId, groupId);
  await sweepGroup(tenantId, groupId);
}

/** Deletes a deleted user's memberships, owner and permission records, then its follow-up. */
export async function sweepUser(tenantId: number, userId: number): Promise<void> {
  await Promise.all([
    deleteUserMemberships(tenantId, userId),
    deleteSubjectRecords(tenantId, 'user', userId, permissionLedger(tenantId)),
  ]);
  await deleteFollowUp({ kind: 'sweep-user', ownerId: tenantId, subjectId: userId });
}

/** Deletes a deleted group's memberships and permission records, then its follow-up. */
export async function sweepGroup(tenantId: number, groupId: number): Promise<void> {
  await Promise.all([
    deleteGroupMemberships(tenantId, groupId),
    deleteSubjectRecords(tenantId, 'group', groupId, permissionLedger(tenantId)),
  ]);
  await deleteFollowUp({ kind: 'sweep-group', ownerId: tenantId, subjectId: groupId });
}
