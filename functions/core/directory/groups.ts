import { GetCommand, PutCommand } from '@aws-sdk/lib-dynamodb';
import { notFound } from '../errors.ts';
import { allocateIds, db, deleteAll, queryAll, tableName, transact } from '../store/dynamo.ts';
import { keys } from '../store/keys.ts';
import { requireUser } from './users.ts';

export interface GroupRecord {
  groupId: number;
  tenantId: number;
  nome: string;
  createdAt: string;
}

interface MembershipRecord {
  tenantId: number;
  groupId: number;
  userId: number;
}

export async function createGroup(tenantId: number, nome: string): Promise<GroupRecord> {
  const [groupId] = (await allocateIds(keys.tenantCounter(tenantId, 'group'), 1)) as [number];
  const group: GroupRecord = { groupId, tenantId, nome, createdAt: new Date().toISOString() };
  await db().send(
    new PutCommand({
      TableName: tableName(),
      Item: { ...group, ...keys.group(tenantId, groupId) },
      ConditionExpression: 'attribute_not_exists(pk)',
    }),
  );
  return group;
}

export async function requireGroup(tenantId: number, groupId: number): Promise<GroupRecord> {
  const result = await db().send(
    new GetCommand({ TableName: tableName(), Key: keys.group(tenantId, groupId), ConsistentRead: true }),
  );
  if (!result.Item) throw notFound('Group not found');
  return result.Item as GroupRecord;
}

export function listGroups(tenantId: number): Promise<GroupRecord[]> {
  return queryAll<GroupRecord>(keys.tenant(tenantId).pk, keys.groupsPrefix);
}

/** Every membership of the tenant (one query, however many groups). */
export function listMemberships(tenantId: number): Promise<MembershipRecord[]> {
  return queryAll<MembershipRecord>(keys.tenant(tenantId).pk, keys.membershipsPrefix());
}

/** PUT /tenant/groups/{id}/members/{userId}: idempotent; the group and the user must be the tenant's. */
export async function addMember(tenantId: number, groupId: number, userId: number): Promise<void> {
  await Promise.all([requireGroup(tenantId, groupId), requireUser(tenantId, userId)]);
  const written = await transact([
    // The user and group must still exist when the membership is written.
    { ConditionCheck: { TableName: tableName(), Key: keys.user(tenantId, userId), ConditionExpression: 'attribute_exists(pk)' } },
    {
      ConditionCheck: { TableName: tableName(), Key: keys.group(tenantId, groupId), ConditionExpression: 'attribute_exists(pk)' },
    },
    { Put: { TableName: tableName(), Item: { ...keys.membership(tenantId, groupId, userId), tenantId, groupId, userId } } },
  ]);
  if (!written) throw notFound('User or group not found');
}

export async function removeMember(tenantId: number, groupId: number, userId: number): Promise<void> {
  await Promise.all([requireGroup(tenantId, groupId), requireUser(tenantId, userId)]);
  const { pk, sk } = keys.membership(tenantId, groupId, userId);
  await transact([{ Delete: { TableName: tableName(), Key: { pk, sk } } }]);
}

/**
 * DELETE /tenant/groups/{id}: the group goes at once, its memberships are swept after (a group
 * may have more members than one transaction holds; readers ignore memberships of groups gone).
 */
export async function deleteGroup(tenantId: number, groupId: number): Promise<void> {
  await requireGroup(tenantId, groupId);
  const written = await transact([
    { Delete: { TableName: tableName(), Key: keys.group(tenantId, groupId), ConditionExpression: 'attribute_exists(pk)' } },
  ]);
  if (!written) throw notFound('Group not found');
  await deleteAll(
    await queryAll<{ pk: string; sk: string }>(keys.tenant(tenantId).pk, keys.membershipsPrefix(groupId), {
      projection: 'pk, sk',
    }),
  );
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

/** Each user's groups (id and name), ignoring memberships left by a deletion still being swept. */
export async function groupsByUser(tenantId: number): Promise<Map<number, Array<{ id: number; nome: string }>>> {
  const [groups, memberships] = await Promise.all([listGroups(tenantId), listMemberships(tenantId)]);
  const names = new Map(groups.map((group) => [group.groupId, group.nome]));
  const byUser = new Map<number, Array<{ id: number; nome: string }>>();
  for (const membership of memberships) {
    const nome = names.get(membership.groupId);
    if (nome !== undefined)
      byUser.set(membership.userId, [...(byUser.get(membership.userId) ?? []), { id: membership.groupId, nome }]);
  }
  return byUser;
}
