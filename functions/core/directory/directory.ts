import { deleteSubjectRecords } from '#functions/core/datamarts/datamart-repository.ts';
import { effectiveAccess } from '#functions/core/datamarts/permissions.ts';
import type { EffectivePermission } from '#functions/core/datamarts/effective-permissions.ts';
import type { Page } from '#functions/core/store/dynamo.ts';
import { deleteGroup, groupsByUser } from './groups.ts';
import { deleteGroupMemberships, deleteUserMemberships, listUsersPage } from './directory-repository.ts';
import { deleteFollowUp } from '#functions/core/follow-ups/follow-up-repository.ts';
import { deleteUser, describeUser, requireUser } from './users.ts';

/**
 * A user as GET /tenant/users shows them (spec 4.10): `id, nome, login`, their groups, and their
 * effective permissions per datamart table (DESIGN 7).
 */
export type UserWithAccess = ReturnType<typeof describeUser> & {
  groups: Array<{ id: number; nome: string }>;
  permissions: Array<EffectivePermission & { datamartId: number }>;
};

export async function listUsersWithAccess(
  tenantId: number,
  limit: number,
  cursor: string | undefined,
): Promise<Page<UserWithAccess>> {
  const [page, groups] = await Promise.all([listUsersPage(tenantId, limit, cursor), groupsByUser(tenantId)]);
  // The memberships read for the groups column serve the permissions too: one read, not two.
  const access = await effectiveAccess(
    tenantId,
    page.items.map((user) => user.userId),
    { memberships: groups },
  );
  return {
    items: page.items.map((user) => ({
      ...describeUser(user),
      groups: groups.get(user.userId) ?? [],
      permissions: access.get(user.userId) ?? [],
    })),
    nextCursor: page.nextCursor,
  };
}

export async function describeUserWithAccess(tenantId: number, userId: number): Promise<UserWithAccess> {
  const [user, groups] = await Promise.all([requireUser(tenantId, userId), groupsByUser(tenantId)]);
  const access = await effectiveAccess(tenantId, [userId], { memberships: groups });
  return { ...describeUser(user), groups: groups.get(userId) ?? [], permissions: access.get(userId) ?? [] };
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
  await Promise.all([deleteUserMemberships(tenantId, userId), deleteSubjectRecords(tenantId, 'user', userId)]);
  await deleteFollowUp({ kind: 'sweep-user', tenantId, subjectId: userId });
}

/** Deletes a deleted group's memberships and permission records, then its follow-up. */
export async function sweepGroup(tenantId: number, groupId: number): Promise<void> {
  await Promise.all([deleteGroupMemberships(tenantId, groupId), deleteSubjectRecords(tenantId, 'group', groupId)]);
  await deleteFollowUp({ kind: 'sweep-group', tenantId, subjectId: groupId });
}
