import type { Page } from '../store/dynamo.ts';
import { groupsByUser } from './groups.ts';
import { describeUser, listUsersPage, requireUser } from './users.ts';

/**
 * A user as GET /tenant/users shows them (spec 4.10): `id, nome, login`, their groups, and their
 * effective permissions per datamart table (none until datamarts exist).
 */
export type UserWithAccess = ReturnType<typeof describeUser> & {
  groups: Array<{ id: number; nome: string }>;
  permissions: unknown[];
};

export async function listUsersWithAccess(
  tenantId: number,
  limit: number,
  cursor: string | undefined,
): Promise<Page<UserWithAccess>> {
  const [page, groups] = await Promise.all([listUsersPage(tenantId, limit, cursor), groupsByUser(tenantId)]);
  return {
    items: page.items.map((user) => ({ ...describeUser(user), groups: groups.get(user.userId) ?? [], permissions: [] })),
    nextCursor: page.nextCursor,
  };
}

export async function describeUserWithAccess(tenantId: number, userId: number): Promise<UserWithAccess> {
  const [user, groups] = await Promise.all([requireUser(tenantId, userId), groupsByUser(tenantId)]);
  return { ...describeUser(user), groups: groups.get(userId) ?? [], permissions: [] };
}
