import { conflict, notFound } from '#functions/core/errors.ts';
import { recordFollowUp } from '#functions/core/follow-ups/follow-up-repository.ts';
import type { Page } from '#functions/core/store/dynamo.ts';
import { type Resumable, unrecorded } from '#functions/core/store/resumable.ts';
import {
  allocateGroupId,
  deleteGroupRecord,
  deleteMembership,
  findGroup,
  type GroupRecord,
  insertGroup,
  insertMembership,
  listGroupMembers,
  listGroupsPage,
  listMemberships,
  listMembershipsOfGroups,
  type MembershipRecord,
} from './directory-repository.ts';
import { maxGroupsPerTenant, maxMembershipsPerTenant } from './quotas.ts';
import { requireUser } from './users.ts';

/**
 * POST /tenant/groups: at most `maxGroupsPerTenant` groups (the tenant's group count, conditioned
 * in the group's own transaction, keeps it under concurrency).
 */
export async function createGroup(
  tenantId: number,
  nome: string,
  record: Resumable<GroupRecord> = unrecorded(),
): Promise<GroupRecord> {
  const groupId = await allocateGroupId(tenantId);
  const group: GroupRecord = { groupId, tenantId, nome, createdAt: new Date().toISOString() };
  if (!(await insertGroup(group, record.finish(group), maxGroupsPerTenant))) {
    throw conflict(`A tenant has at most ${maxGroupsPerTenant.toLocaleString('en')} groups`, 'group_limit');
  }
  return group;
}

export async function requireGroup(tenantId: number, groupId: number): Promise<GroupRecord> {
  const group = await findGroup(tenantId, groupId);
  if (!group) throw notFound('Group not found', 'group_not_found');
  return group;
}

/**
 * PUT /tenant/groups/{id}/members/{userId}: idempotent; the group and the user must be the tenant's.
 * At most `maxMembershipsPerTenant` memberships over all the tenant's groups (its membership count,
 * conditioned in the membership's own transaction); putting one that is there already counts nothing.
 */
export async function addMember(tenantId: number, groupId: number, userId: number): Promise<void> {
  await Promise.all([requireGroup(tenantId, groupId), requireUser(tenantId, userId)]);
  // The user and group must still exist when the membership is written.
  const outcome = await insertMembership(tenantId, groupId, userId, maxMembershipsPerTenant);
  if (outcome === 'missing') throw notFound('User or group not found', 'member_not_found');
  if (outcome === 'limit') {
    throw conflict(
      `A tenant has at most ${maxMembershipsPerTenant.toLocaleString('en')} memberships over all its groups`,
      'membership_limit',
    );
  }
}

export async function removeMember(tenantId: number, groupId: number, userId: number): Promise<void> {
  await Promise.all([requireGroup(tenantId, groupId), requireUser(tenantId, userId)]);
  await deleteMembership(tenantId, groupId, userId);
}

/**
 * DELETE /tenant/groups/{id}: the group goes at once (off the tenant's group count), with the
 * follow-up that sweeps its memberships and permission records (a group may have more members than
 * one transaction holds; readers ignore memberships of groups gone).
 */
export async function deleteGroup(tenantId: number, groupId: number): Promise<void> {
  await requireGroup(tenantId, groupId);
  const sweep = recordFollowUp({ kind: 'sweep-group', ownerId: tenantId, subjectId: groupId });
  if (!(await deleteGroupRecord(tenantId, groupId, [sweep]))) throw notFound('Group not found', 'group_not_found');
}

/** A group as GET /tenant/groups and GET /tenant/groups/{id} show it. */
export interface GroupView {
  id: number;
  nome: string;
  members: number[];
}

/** One group with its member ids, for GET /tenant/groups/{id} (404 for another tenant's). */
export async function describeGroup(tenantId: number, groupId: number): Promise<GroupView> {
  const [group, members] = await Promise.all([requireGroup(tenantId, groupId), listGroupMembers(tenantId, groupId)]);
  return { id: group.groupId, nome: group.nome, members: members.map((membership) => membership.userId) };
}

/**
 * The groups as GET /tenant/groups shows them, from what was read: the memberships are sorted by
 * group once (linear in groups and memberships), and each group is built as the answer takes it.
 */
export function groupViews(groups: readonly GroupRecord[], memberships: readonly MembershipRecord[]): GroupView[] {
  const membersOf = new Map<number, number[]>();
  for (const { groupId, userId } of memberships) {
    const members = membersOf.get(groupId);
    if (members) members.push(userId);
    else membersOf.set(groupId, [userId]);
  }
  return groups.map((group) => ({ id: group.groupId, nome: group.nome, members: membersOf.get(group.groupId) ?? [] }));
}

/**
 * GET /tenant/groups: every group with its member ids, or a page of `limit`. The whole list reads the
 * groups and every membership together; a page reads its groups, then the memberships of those
 * groups alone (one Query of their range of keys).
 */
export async function listGroupViews(
  tenantId: number,
  limit: number | undefined,
  cursor: string | undefined,
): Promise<Omit<Page<GroupView>, 'cursorAfter'>> {
  const [page, everyMembership] = await Promise.all([
    listGroupsPage(tenantId, limit, cursor),
    limit === undefined ? listMemberships(tenantId) : undefined,
  ]);
  const first = page.items[0];
  const last = page.items.at(-1);
  const memberships =
    everyMembership ?? (first && last ? await listMembershipsOfGroups(tenantId, first.groupId, last.groupId) : []);
  return { items: groupViews(page.items, memberships), nextCursor: page.nextCursor };
}
