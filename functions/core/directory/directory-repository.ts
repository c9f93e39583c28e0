import { UpdateCommand } from '@aws-sdk/lib-dynamodb';
import {
  nextTenantId,
  db,
  deleteAll,
  getAll,
  getItem,
  type Page,
  queryAll,
  queryList,
  tableName,
  transact,
  type TransactItem,
} from '#functions/core/store/dynamo.ts';
import { keys } from '#functions/core/store/keys.ts';

/** A user of the BI, linked to one tenant. `login` is what the tenant backend knows them by. */
export interface UserRecord {
  userId: number;
  tenantId: number;
  login: string;
  nome: string;
  email?: string;
  createdAt: string;
  updatedAt: string;
  /** Login tokens issued and sessions opened before this instant (epoch seconds) are void. */
  revokedBefore?: number;
  /** Set once the user owns a datamart: the user's entry in the tenant's owners index. */
  gsi1pk?: string;
}

export interface GroupRecord {
  groupId: number;
  tenantId: number;
  nome: string;
  createdAt: string;
}

export interface MembershipRecord {
  tenantId: number;
  groupId: number;
  userId: number;
}

export function allocateUserId(tenantId: number): Promise<number> {
  return nextTenantId(tenantId, 'user');
}

/** The item that makes a login unique in its tenant and points at its user. */
const loginClaim = (tenantId: number, login: string, userId: number) => ({
  Put: {
    TableName: tableName(),
    Item: { ...keys.userLogin(tenantId, login), userId },
    ConditionExpression: 'attribute_not_exists(pk)',
  },
});

/** Writes the user and claims its login, with `alongside`, together; `false` when the login is taken. */
export function insertUser(user: UserRecord, alongside: readonly TransactItem[]): Promise<boolean> {
  return transact([
    ...alongside,
    {
      Put: {
        TableName: tableName(),
        Item: { ...user, ...keys.user(user.tenantId, user.userId) },
        ConditionExpression: 'attribute_not_exists(pk)',
      },
    },
    loginClaim(user.tenantId, user.login, user.userId),
  ]);
}

export async function findUser(tenantId: number, userId: number): Promise<UserRecord | undefined> {
  return getItem<UserRecord>(keys.user(tenantId, userId));
}

/** Several users of the tenant by id (batch reads); missing ones are left out. */
export function findUsers(tenantId: number, userIds: readonly number[]): Promise<UserRecord[]> {
  return getAll<UserRecord>(userIds.map((userId) => keys.user(tenantId, userId)));
}

/** The user of a login in this tenant (two GetItems: the login, then the user). Logins compare case-insensitively. */
export async function findUserByLogin(tenantId: number, login: string): Promise<UserRecord | undefined> {
  const entry = await getItem<{ userId: number }>(keys.userLogin(tenantId, login));
  return entry ? findUser(tenantId, entry.userId) : undefined;
}

/**
 * Replaces `user`'s login, name and e-mail with `next`'s if it did not change since it was read; a
 * new login (not only a new case of it) moves its uniqueness claim in the same transaction. The
 * rest of the item (its revocation instant, its owners index entry) stays as it is. Says whether
 * it was written and whether the login moved.
 */
export async function replaceUser(user: UserRecord, next: UserRecord): Promise<{ written: boolean; loginMoved: boolean }> {
  const { tenantId, userId } = user;
  const loginMoved = keys.userLogin(tenantId, next.login).sk !== keys.userLogin(tenantId, user.login).sk;
  const written = await transact([
    {
      Update: {
        TableName: tableName(),
        Key: keys.user(tenantId, userId),
        UpdateExpression: `SET #login = :login, #nome = :nome, #updatedAt = :now ${next.email === undefined ? 'REMOVE #email' : ', #email = :email'}`,
        ConditionExpression: '#updatedAt = :seen',
        ExpressionAttributeNames: { '#login': 'login', '#nome': 'nome', '#email': 'email', '#updatedAt': 'updatedAt' },
        ExpressionAttributeValues: {
          ':login': next.login,
          ':nome': next.nome,
          ':now': next.updatedAt,
          ':seen': user.updatedAt,
          ...(next.email === undefined ? {} : { ':email': next.email }),
        },
      },
    },
    ...(loginMoved
      ? [
          { Delete: { TableName: tableName(), Key: keys.userLogin(tenantId, user.login) } },
          loginClaim(tenantId, next.login, userId),
        ]
      : []),
  ]);
  return { written, loginMoved };
}

/**
 * Deletes the user and its login, with `alongside` (the follow-up that sweeps what it leaves),
 * together; `false` when the user is gone already.
 */
export function deleteUserAndLogin(user: UserRecord, alongside: readonly TransactItem[]): Promise<boolean> {
  return transact([
    ...alongside,
    {
      Delete: {
        TableName: tableName(),
        Key: keys.user(user.tenantId, user.userId),
        ConditionExpression: 'attribute_exists(pk)',
      },
    },
    { Delete: { TableName: tableName(), Key: keys.userLogin(user.tenantId, user.login) } },
  ]);
}

/** Sweeps the memberships of a user (through the index of memberships by user). */
export async function deleteUserMemberships(tenantId: number, userId: number): Promise<void> {
  const memberships = await queryAll<{ pk: string; sk: string }>(keys.userMembershipsIndex(tenantId, userId), '', {
    index: 'gsi1',
    projection: 'pk, sk',
  });
  await deleteAll(memberships);
}

/** Sets the user's `revokedBefore`; the user must exist. */
export async function setRevokedBefore(tenantId: number, userId: number, revokedBefore: number): Promise<void> {
  await db().send(
    new UpdateCommand({
      TableName: tableName(),
      Key: keys.user(tenantId, userId),
      UpdateExpression: 'SET revokedBefore = :revokedBefore',
      ConditionExpression: 'attribute_exists(pk)',
      ExpressionAttributeValues: { ':revokedBefore': revokedBefore },
    }),
  );
}

/** The tenant's users: all, or a page of `limit`. */
export function listUsers(tenantId: number, limit: number | undefined, cursor: string | undefined): Promise<Page<UserRecord>> {
  return queryList<UserRecord>({ partition: keys.tenant(tenantId).pk, prefix: keys.usersPrefix, limit, cursor });
}

/** What naming a user in an answer takes. */
export type UserName = Pick<UserRecord, 'userId' | 'nome' | 'login'>;

/** Every user of the tenant, only what naming them takes (one Query: about 5,000 users a page). */
export function listUserNames(tenantId: number): Promise<UserName[]> {
  return queryAll<UserName>(keys.tenant(tenantId).pk, keys.usersPrefix, { projection: 'userId, nome, login' });
}

/**
 * Every user who owns (or owned) a datamart of the tenant, through the owners index: one Query,
 * however many datamarts. The index is eventually consistent: a brand-new owner may be missing for
 * a moment, a deleted user is gone from it with the user.
 */
export function listDatamartOwners(tenantId: number): Promise<UserName[]> {
  return queryAll<UserName>(keys.datamartOwnersPartition(tenantId), '', { index: 'gsi1', projection: 'userId, nome, login' });
}

/**
 * For the transaction that makes these users owners of a datamart: those not in the owners index yet
 * go in, if they still exist (a deleted user must not come back as an item with only index keys).
 */
export function ownersIndexEntries(users: readonly UserRecord[]): TransactItem[] {
  return users
    .filter((user) => user.gsi1pk === undefined)
    .map((user) => {
      const entry = keys.datamartOwnersIndex(user.tenantId, user.userId);
      return {
        Update: {
          TableName: tableName(),
          Key: keys.user(user.tenantId, user.userId),
          UpdateExpression: 'SET gsi1pk = :pk, gsi1sk = :sk',
          ConditionExpression: 'attribute_exists(pk)',
          ExpressionAttributeValues: { ':pk': entry.gsi1pk, ':sk': entry.gsi1sk },
        },
      };
    });
}

export function allocateGroupId(tenantId: number): Promise<number> {
  return nextTenantId(tenantId, 'group');
}

/** Writes the group, with `alongside`, together. */
export async function insertGroup(group: GroupRecord, alongside: readonly TransactItem[]): Promise<void> {
  const written = await transact([
    {
      Put: {
        TableName: tableName(),
        Item: { ...group, ...keys.group(group.tenantId, group.groupId) },
        ConditionExpression: 'attribute_not_exists(pk)',
      },
    },
    ...alongside,
  ]);
  if (!written) throw new Error(`Group ${group.groupId} of tenant ${group.tenantId} already exists`);
}

export async function findGroup(tenantId: number, groupId: number): Promise<GroupRecord | undefined> {
  return getItem<GroupRecord>(keys.group(tenantId, groupId));
}

export function listGroups(tenantId: number): Promise<GroupRecord[]> {
  return queryAll<GroupRecord>(keys.tenant(tenantId).pk, keys.groupsPrefix);
}

/** Every membership of the tenant (one query, however many groups). */
export function listMemberships(tenantId: number): Promise<MembershipRecord[]> {
  return queryAll<MembershipRecord>(keys.tenant(tenantId).pk, keys.membershipsPrefix());
}

/** One user's memberships (one index query), whatever the size of the tenant. */
export function listUserMemberships(tenantId: number, userId: number): Promise<MembershipRecord[]> {
  return queryAll<MembershipRecord>(keys.userMembershipsIndex(tenantId, userId), '', { index: 'gsi1' });
}

/** The memberships of one group (one query of its prefix). */
export function listGroupMembers(tenantId: number, groupId: number): Promise<MembershipRecord[]> {
  return queryAll<MembershipRecord>(keys.tenant(tenantId).pk, keys.membershipsPrefix(groupId));
}

/** Writes the membership if the user and the group both still exist; `false` otherwise. */
export function insertMembership(tenantId: number, groupId: number, userId: number): Promise<boolean> {
  return transact([
    { ConditionCheck: { TableName: tableName(), Key: keys.user(tenantId, userId), ConditionExpression: 'attribute_exists(pk)' } },
    {
      ConditionCheck: { TableName: tableName(), Key: keys.group(tenantId, groupId), ConditionExpression: 'attribute_exists(pk)' },
    },
    { Put: { TableName: tableName(), Item: { ...keys.membership(tenantId, groupId, userId), tenantId, groupId, userId } } },
  ]);
}

export async function deleteMembership(tenantId: number, groupId: number, userId: number): Promise<void> {
  const { pk, sk } = keys.membership(tenantId, groupId, userId);
  await transact([{ Delete: { TableName: tableName(), Key: { pk, sk } } }]);
}

/** Deletes the group's record, with `alongside`, together; `false` when it is gone already. */
export function deleteGroupRecord(tenantId: number, groupId: number, alongside: readonly TransactItem[]): Promise<boolean> {
  return transact([
    { Delete: { TableName: tableName(), Key: keys.group(tenantId, groupId), ConditionExpression: 'attribute_exists(pk)' } },
    ...alongside,
  ]);
}

/** Sweeps the memberships of a group. */
export async function deleteGroupMemberships(tenantId: number, groupId: number): Promise<void> {
  await deleteAll(
    await queryAll<{ pk: string; sk: string }>(keys.tenant(tenantId).pk, keys.membershipsPrefix(groupId), {
      projection: 'pk, sk',
    }),
  );
}
