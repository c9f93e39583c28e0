import { deleteSubjectRecords } from '#functions/core/datamarts/datamart-repository.ts';
import { effectiveAccess } from '#functions/core/datamarts/permissions.ts';
import type { EffectivePermission } from '#functions/core/datamarts/effective-permissions.ts';
import type { Page } from '#functions/core/store/dynamo.ts';
import { deleteGroup, groupsByUser } from './groups.ts';
import { listUsersPage } from './directory-repository.ts';
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

/** Unlinks a user and removes every owner and permission record of theirs. */
export async function removeUser(tenantId: number, userId: number): Promise<void> {
  await deleteUser(tenantId, userId);
  await deleteSubjectRecords(tenantId, 'user', userId);
}

/** Removes a group, its memberships and its permission records. */
export async function removeGroup(tenantId: number, groupId: number): Promise<void> {
  await deleteGroup(tenantId, groupId);
  await deleteSubjectRecords(tenantId, 'group', groupId);
}
