import { notFound } from '#functions/core/errors.ts';
import { recordFollowUp } from '#functions/core/follow-ups/follow-up-repository.ts';
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
  listGroups,
  listMemberships,
} from './directory-repository.ts';
import { requireUser } from './users.ts';

export async function createGroup(
  tenantId: number,
  nome: string,
  record: Resumable<GroupRecord> = unrecorded(),
): Promise<GroupRecord> {
  const groupId = await allocateGroupId(tenantId);
  const group: GroupRecord = { groupId, tenantId, nome, createdAt: new Date().toISOString() };
  await insertGroup(group, record.finish(group));
  return group;
}

export async function requireGroup(tenantId: number, groupId: number): Promise<GroupRecord> {
  const group = await findGroup(tenantId, groupId);
  if (!group) throw notFound('Group not found');
  return group;
}

/** PUT /tenant/groups/{id}/members/{userId}: idempotent; the group and the user must be the tenant's. */
export async function addMember(tenantId: number, groupId: number, userId: number): Promise<void> {
  await Promise.all([requireGroup(tenantId, groupId), requireUser(tenantId, userId)]);
  // The user and group must still exist when the membership is written.
  if (!(await insertMembership(tenantId, groupId, userId))) throw notFound('User or group not found');
}

export async function removeMember(tenantId: number, groupId: number, userId: number): Promise<void> {
  await Promise.all([requireGroup(tenantId, groupId), requireUser(tenantId, userId)]);
  await deleteMembership(tenantId, groupId, userId);
}

/**
 * DELETE /tenant/groups/{id}: the group goes at once, with the follow-up that sweeps its
 * memberships and permission records (a group may have more members than one transaction holds;
 * readers ignore memberships of groups gone).
 */
export async function deleteGroup(tenantId: number, groupId: number): Promise<void> {
  await requireGroup(tenantId, groupId);
  const sweep = recordFollowUp({ kind: 'sweep-group', ownerId: tenantId, subjectId: groupId });
  if (!(await deleteGroupRecord(tenantId, groupId, [sweep]))) throw notFound('Group not found');
}

/** One group with its member ids, for GET /tenant/groups/{id} (404 for another tenant's). */
export async function describeGroup(tenantId: number, groupId: number) {
  const [group, members] = await Promise.all([requireGroup(tenantId, groupId), listGroupMembers(tenantId, groupId)]);
  return { id: group.groupId, nome: group.nome, members: members.map((membership) => membership.userId) };
}

/** Groups with their member ids, for GET /tenant/groups. */
export async function describeGroups(tenantId: number) {
  const [groups, memberships] = await Promise.all([listGroups(tenantId), listMemberships(tenantId)]);
  return groups.map((group) => ({
    id: group.groupId,
    nome: group.nome,
    members: memberships.filter((membership) => membership.groupId === group.groupId).map((membership) => membership.userId),
  }));
}
