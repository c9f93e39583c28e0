import {
  nextTenantId,
  getAll,
  getItem,
  type Page,
  queryAll,
  queryBetween,
  queryList,
  tableName,
  type TransactItem,
} from '#functions/core/store/dynamo.ts';
import { claimWrites } from '#functions/core/store/claims.ts';
import { countedTransaction, readCount } from '#functions/core/store/counts.ts';
import * as stored from '#functions/core/store/entity-declarations.ts';
import {
  type Alongside,
  type AlongsideName,
  type NamedItem,
  nameByKey,
  type Transaction,
  transaction,
} from '#functions/core/store/transaction.ts';

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
  /** What the user's own permission records may add to their effective permissions (answer bytes; quotas.ts). */
  permBytes?: number;
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

/**
 * The counts of the tenant that quotas bound (quotas.ts), one item each: `COUNT#USERS`,
 * `COUNT#GROUPS`, `COUNT#MEMBERSHIPS`, `COUNT#GROUPPERMBYTES`.
 */
type CountName = 'USERS' | 'GROUPS' | 'MEMBERSHIPS' | 'GROUPPERMBYTES';
const countKey = (tenantId: number, name: CountName) => stored.tenantCount.key({ tenantId, name });

/** A decrease is never refused: its count's quota does not matter. */
const maxCount = Number.MAX_SAFE_INTEGER;

/** Commits `tx` with a change to one of the tenant's counts (store/counts.ts). */
const countedWrite = <Name extends string>(
  tenantId: number,
  count: { name: CountName; delta: number; max: number },
  tx: Transaction<Name>,
) => countedTransaction(countKey(tenantId, count.name), count, tx);

/** The claim that makes a login unique in its tenant (as a reader sees it) and points at its user. */
const loginClaims = claimWrites(stored.userLogin, stored.user);

/**
 * Writes the user and claims its login, with `alongside`, and one more on the tenant's user count,
 * together: `login_taken` when the login is taken, `limit` when the tenant has `max` users already
 * (the count's condition, whatever runs at the same time). `staleOwner`: the claim names that user,
 * who is gone (a claim left behind): take it over, if it still names them and they are still gone.
 */
export async function insertUser(
  user: UserRecord,
  alongside: Alongside,
  max: number,
  staleOwner?: number,
): Promise<'written' | 'login_taken' | 'limit'> {
  const tx = transaction<'user' | 'loginClaim' | AlongsideName>()
    .include(alongside)
    .add('user', {
      Put: {
        TableName: tableName(),
        Item: { ...user, ...stored.user.key(user) },
        ConditionExpression: 'attribute_not_exists(pk)',
      },
    })
    .add('loginClaim', ...loginClaims.take(user, user.userId, staleOwner));
  const outcome = await countedWrite(user.tenantId, { name: 'USERS', delta: 1, max }, tx);
  if (outcome.written) return 'written';
  return 'limit' in outcome ? 'limit' : 'login_taken';
}

export async function findUser(tenantId: number, userId: number): Promise<UserRecord | undefined> {
  return getItem<UserRecord>(stored.user.key({ tenantId, userId }));
}

/** Several users of the tenant by id (batch reads); missing ones are left out. */
export function findUsers(tenantId: number, userIds: readonly number[]): Promise<UserRecord[]> {
  return getAll<UserRecord>(userIds.map((userId) => stored.user.key({ tenantId, userId })));
}

/** The user a login's claim names (consistent), or undefined when the login is free. */
export function findLoginClaim(tenantId: number, login: string): Promise<number | undefined> {
  return loginClaims.holderOf({ tenantId, login });
}

/** The user of a login in this tenant (two GetItems: the login, then the user). Logins compare as a reader sees them (names.ts). */
export async function findUserByLogin(tenantId: number, login: string): Promise<UserRecord | undefined> {
  const userId = await findLoginClaim(tenantId, login);
  return userId === undefined ? undefined : findUser(tenantId, userId);
}

/** What a rename found: written; the user changed since read; the new login's claim taken; the old claim not the user's. */
export type RenameOutcome = 'written' | 'changed' | 'login_taken' | 'claim_not_held';

/**
 * Replaces `user`'s login, name and e-mail with `next`'s if it did not change since it was read; a
 * new login (not only a new case of it) moves its uniqueness claim in the same transaction: the old
 * claim is deleted only while it is still this user's, and the new one is taken only while it is
 * free (or names `staleOwner`, a user who is gone). `releaseOld: false` leaves an old claim that
 * names another user alone. The rest of the item (its revocation instant, its owners index entry,
 * its permission charge) stays as it is.
 */
export async function replaceUser(
  user: UserRecord,
  next: UserRecord,
  options: { staleOwner?: number; releaseOld?: boolean } = {},
): Promise<{ outcome: RenameOutcome; loginMoved: boolean }> {
  const { tenantId, userId } = user;
  const loginMoved = !loginClaims.same(user, next);
  const release = loginMoved && options.releaseOld !== false;
  const tx = transaction<'user' | 'loginClaim' | 'loginRelease'>().add('user', {
    Update: {
      TableName: tableName(),
      Key: stored.user.key({ tenantId, userId }),
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
  });
  if (loginMoved) tx.add('loginClaim', ...loginClaims.take(next, userId, options.staleOwner));
  if (release) tx.add('loginRelease', loginClaims.release(user, userId));
  const result = await tx.commit();
  if (result.written) return { outcome: 'written', loginMoved };
  if (result.failed.has('user')) return { outcome: 'changed', loginMoved };
  if (result.failed.has('loginRelease')) return { outcome: 'claim_not_held', loginMoved };
  return { outcome: 'login_taken', loginMoved };
}

/** What a deletion found: done; the user changed (or is gone) since read; its claim names another user. */
export type DeleteUserOutcome = 'deleted' | 'changed' | 'claim_not_held';

/**
 * Deletes the user as read (its `updatedAt`: a rename since moved its claim) and the login claim it
 * holds, with `alongside` (the follow-up that sweeps what it leaves), and takes it off the tenant's
 * user count, together. The claim goes only while it is still this user's; `releaseClaim: false`
 * deletes the user without it (a claim that names another user is theirs).
 */
export async function deleteUserAndLogin(
  user: UserRecord,
  alongside: Alongside,
  releaseClaim = true,
): Promise<DeleteUserOutcome> {
  const { tenantId } = user;
  const tx = transaction<'user' | 'loginRelease' | AlongsideName>().add('user', {
    Delete: {
      TableName: tableName(),
      Key: stored.user.key({ tenantId, userId: user.userId }),
      ConditionExpression: 'updatedAt = :seen',
      ExpressionAttributeValues: { ':seen': user.updatedAt },
    },
  });
  if (releaseClaim) tx.add('loginRelease', loginClaims.release(user, user.userId));
  tx.include(alongside);
  const result = await countedWrite(tenantId, { name: 'USERS', delta: -1, max: maxCount }, tx);
  if (result.written) return 'deleted';
  return 'failed' in result && result.failed.has('user') ? 'changed' : 'claim_not_held';
}

/**
 * The item that charges `delta` answer bytes (quotas.ts) to a user's own permission records, for the
 * transaction that writes them: it fails its condition when the user is gone, or when a growth would
 * take the user over `max` (`undefined`: no quota, for records that exist already).
 */
export function userPermissionCharge(tenantId: number, userId: number, delta: number, max: number | undefined): TransactItem {
  const bounded = delta > 0 && max !== undefined;
  return {
    Update: {
      TableName: tableName(),
      Key: stored.user.key({ tenantId, userId }),
      UpdateExpression: 'ADD permBytes :delta',
      ConditionExpression: bounded
        ? 'attribute_exists(pk) AND (attribute_not_exists(permBytes) OR permBytes <= :room)'
        : 'attribute_exists(pk)',
      ExpressionAttributeValues: bounded ? { ':delta': delta, ':room': max - delta } : { ':delta': delta },
    },
  };
}

/**
 * The items that charge `delta` answer bytes (quotas.ts) of a group's permission records to the
 * tenant, for the transaction that writes them: they fail their conditions when the group is gone
 * (`check`: a write; a sweep gives back the charges of a group that is gone), or when a growth would
 * take the tenant over `max` (`undefined`: no quota, for records that exist already). A tenant
 * without the count has no group record yet: the first charge starts it.
 */
export function groupPermissionCharge(
  tenantId: number,
  groupId: number,
  delta: number,
  max: number | undefined,
  check = true,
): TransactItem[] {
  const bounded = delta > 0 && max !== undefined;
  return [
    ...(check
      ? [
          {
            ConditionCheck: {
              TableName: tableName(),
              Key: stored.group.key({ tenantId, groupId }),
              ConditionExpression: 'attribute_exists(pk)',
            },
          },
        ]
      : []),
    {
      Update: {
        TableName: tableName(),
        Key: countKey(tenantId, 'GROUPPERMBYTES'),
        UpdateExpression: 'ADD #value :delta',
        ...(bounded ? { ConditionExpression: 'attribute_not_exists(#value) OR #value <= :room' } : {}),
        ExpressionAttributeNames: { '#value': 'value' },
        ExpressionAttributeValues: bounded ? { ':delta': delta, ':room': max - delta } : { ':delta': delta },
      },
    },
  ];
}

/** The answer bytes the tenant's group permission records are charged (0 before the count is kept). */
export async function findGroupPermissionBytes(tenantId: number): Promise<number> {
  return (await getItem<{ value: number }>(countKey(tenantId, 'GROUPPERMBYTES')))?.value ?? 0;
}

/** How many of a quota's counts the tenant has used: users, groups, memberships. */
export function findCount(tenantId: number, name: 'USERS' | 'GROUPS' | 'MEMBERSHIPS'): Promise<number> {
  return readCount(countKey(tenantId, name));
}

/** Memberships, in transactions of at most this many (with the count's item). */
const membershipsPerTransaction = 99;

/** Each membership of a sweep's transaction by its own name: the ones gone already are left out of the next. */
const membershipName = (membership: { pk: string; sk: string }) => nameByKey('membership', membership);

/**
 * Deletes memberships and takes them off the tenant's count, each only while it exists (a user's
 * sweep and a group's may meet on one), a transaction of up to 99 at a time; one that is gone
 * already is left out and the rest go again.
 */
async function deleteCountedMemberships(tenantId: number, memberships: readonly { pk: string; sk: string }[]): Promise<void> {
  for (let start = 0; start < memberships.length; start += membershipsPerTransaction) {
    let pending = memberships.slice(start, start + membershipsPerTransaction);
    while (pending.length > 0) {
      const tx = transaction<ReturnType<typeof membershipName>>();
      for (const { pk, sk } of pending) {
        tx.add(membershipName({ pk, sk }), {
          Delete: { TableName: tableName(), Key: { pk, sk }, ConditionExpression: 'attribute_exists(pk)' },
        });
      }
      const outcome = await countedWrite(tenantId, { name: 'MEMBERSHIPS', delta: -pending.length, max: maxCount }, tx);
      if (outcome.written || 'limit' in outcome) break;
      const { failed } = outcome;
      pending = pending.filter((membership) => !failed.has(membershipName(membership)));
    }
  }
}

/** Sweeps the memberships of a user (through the index of memberships by user), taking them off the tenant's count. */
export async function deleteUserMemberships(tenantId: number, userId: number): Promise<void> {
  const memberships = await queryAll<{ pk: string; sk: string }>(
    stored.membership.indexes.gsi1.partition({ tenantId, userId }),
    '',
    { index: 'gsi1', projection: 'pk, sk' },
  );
  await deleteCountedMemberships(tenantId, memberships);
}

/** The tenant's users: all, or a page of `limit`. */
export function listUsers(tenantId: number, limit: number | undefined, cursor: string | undefined): Promise<Page<UserRecord>> {
  return queryList<UserRecord>({
    partition: stored.tenant.key({ tenantId }).pk,
    prefix: stored.user.keyPrefix({}),
    limit,
    cursor,
  });
}

/** What naming a user in an answer takes. */
export type UserName = Pick<UserRecord, 'userId' | 'nome' | 'login'>;

/** Every user of the tenant, only what naming them takes (one Query: about 5,000 users a page). */
export function listUserNames(tenantId: number): Promise<UserName[]> {
  return queryAll<UserName>(stored.tenant.key({ tenantId }).pk, stored.user.keyPrefix({}), { projection: 'userId, nome, login' });
}

/**
 * Every user who owns (or owned) a datamart of the tenant, through the owners index: one Query,
 * however many datamarts. The index is eventually consistent: a brand-new owner may be missing for
 * a moment, a deleted user is gone from it with the user.
 */
export function listDatamartOwners(tenantId: number): Promise<UserName[]> {
  return queryAll<UserName>(stored.user.indexes.gsi1.partition({ tenantId }), '', {
    index: 'gsi1',
    projection: 'userId, nome, login',
  });
}

/**
 * For the transaction that makes these users owners of a datamart: those not in the owners index yet
 * go in, if they still exist (a deleted user must not come back as an item with only index keys).
 */
export function ownersIndexEntries(users: readonly UserRecord[]): NamedItem<'ownersIndexEntry'>[] {
  return users
    .filter((user) => user.gsi1pk === undefined)
    .map((user) => {
      const entry = stored.user.indexEntry(user);
      return {
        name: 'ownersIndexEntry',
        item: {
          Update: {
            TableName: tableName(),
            Key: stored.user.key(user),
            UpdateExpression: 'SET gsi1pk = :pk, gsi1sk = :sk',
            ConditionExpression: 'attribute_exists(pk)',
            ExpressionAttributeValues: { ':pk': entry.gsi1pk, ':sk': entry.gsi1sk },
          },
        },
      };
    });
}

export function allocateGroupId(tenantId: number): Promise<number> {
  return nextTenantId(tenantId, 'group');
}

/**
 * Writes the group, with `alongside`, and one more on the tenant's group count, together: `false`
 * when the tenant has `max` groups already (the count's condition, whatever runs at the same time).
 */
export async function insertGroup(group: GroupRecord, alongside: Alongside, max: number): Promise<boolean> {
  const tx = transaction<'group' | AlongsideName>()
    .add('group', {
      Put: {
        TableName: tableName(),
        Item: { ...group, ...stored.group.key(group) },
        ConditionExpression: 'attribute_not_exists(pk)',
      },
    })
    .include(alongside);
  const outcome = await countedWrite(group.tenantId, { name: 'GROUPS', delta: 1, max }, tx);
  if (outcome.written) return true;
  if ('limit' in outcome) return false;
  throw new Error(`Group ${group.groupId} of tenant ${group.tenantId} already exists`);
}

export async function findGroup(tenantId: number, groupId: number): Promise<GroupRecord | undefined> {
  return getItem<GroupRecord>(stored.group.key({ tenantId, groupId }));
}

/** The tenant's groups, by id: all of them, or a page of `limit` (`maxGroupsPerTenant` bounds the whole list). */
export function listGroupsPage(
  tenantId: number,
  limit: number | undefined,
  cursor: string | undefined,
): Promise<Page<GroupRecord>> {
  return queryList<GroupRecord>({
    partition: stored.tenant.key({ tenantId }).pk,
    prefix: stored.group.keyPrefix({}),
    limit,
    cursor,
  });
}

/** Several groups of the tenant by id (batch reads, consistent); missing ones are left out. */
export function findGroups(tenantId: number, groupIds: readonly number[]): Promise<GroupRecord[]> {
  return getAll<GroupRecord>(groupIds.map((groupId) => stored.group.key({ tenantId, groupId })));
}

export async function listGroups(tenantId: number): Promise<GroupRecord[]> {
  return (await listGroupsPage(tenantId, undefined, undefined)).items;
}

/** Every membership of the tenant (one query, however many groups). */
export function listMemberships(tenantId: number): Promise<MembershipRecord[]> {
  return queryAll<MembershipRecord>(stored.tenant.key({ tenantId }).pk, stored.membership.keyPrefix({}));
}

/** The memberships of the groups from `firstGroupId` to `lastGroupId` (one query of their range of keys). */
export function listMembershipsOfGroups(
  tenantId: number,
  firstGroupId: number,
  lastGroupId: number,
): Promise<MembershipRecord[]> {
  return queryBetween<MembershipRecord>(
    stored.tenant.key({ tenantId }).pk,
    stored.membership.keyPrefix({ groupId: firstGroupId }),
    `${stored.membership.keyPrefix({ groupId: lastGroupId })}\uffff`,
  );
}

/** One user's memberships (one index query), whatever the size of the tenant. */
export function listUserMemberships(tenantId: number, userId: number): Promise<MembershipRecord[]> {
  return queryAll<MembershipRecord>(stored.membership.indexes.gsi1.partition({ tenantId, userId }), '', { index: 'gsi1' });
}

/** The memberships of one group (one query of its prefix). */
export function listGroupMembers(tenantId: number, groupId: number): Promise<MembershipRecord[]> {
  return queryAll<MembershipRecord>(stored.tenant.key({ tenantId }).pk, stored.membership.keyPrefix({ groupId }));
}

/**
 * Writes the membership if the user and the group both still exist, and one more on the tenant's
 * membership count within `max`: `missing` when either is gone, `exists` when it was there already
 * (nothing written, nothing counted), `limit` when the tenant has `max` memberships.
 */
export async function insertMembership(
  tenantId: number,
  groupId: number,
  userId: number,
  max: number,
): Promise<'written' | 'exists' | 'missing' | 'limit'> {
  const membership: MembershipRecord = { tenantId, groupId, userId };
  const tx = transaction<'user' | 'group' | 'membership'>()
    .add('user', {
      ConditionCheck: {
        TableName: tableName(),
        Key: stored.user.key({ tenantId, userId }),
        ConditionExpression: 'attribute_exists(pk)',
      },
    })
    .add('group', {
      ConditionCheck: {
        TableName: tableName(),
        Key: stored.group.key({ tenantId, groupId }),
        ConditionExpression: 'attribute_exists(pk)',
      },
    })
    .add('membership', {
      Put: {
        TableName: tableName(),
        Item: { ...stored.membership.key(membership), ...stored.membership.indexEntry(membership), ...membership },
        ConditionExpression: 'attribute_not_exists(pk)',
      },
    });
  const outcome = await countedWrite(tenantId, { name: 'MEMBERSHIPS', delta: 1, max }, tx);
  if (outcome.written) return 'written';
  if ('limit' in outcome) return 'limit';
  return outcome.failed.has('user') || outcome.failed.has('group') ? 'missing' : 'exists';
}

/** Deletes the membership, if there is one, and takes it off the tenant's count. */
export async function deleteMembership(tenantId: number, groupId: number, userId: number): Promise<void> {
  await deleteCountedMemberships(tenantId, [stored.membership.key({ tenantId, groupId, userId })]);
}

/**
 * Deletes the group's record, with `alongside`, and takes it off the tenant's group count,
 * together; `false` when it is gone already.
 */
export async function deleteGroupRecord(tenantId: number, groupId: number, alongside: Alongside): Promise<boolean> {
  const tx = transaction<'group' | AlongsideName>()
    .add('group', {
      Delete: {
        TableName: tableName(),
        Key: stored.group.key({ tenantId, groupId }),
        ConditionExpression: 'attribute_exists(pk)',
      },
    })
    .include(alongside);
  const outcome = await countedWrite(tenantId, { name: 'GROUPS', delta: -1, max: maxCount }, tx);
  return outcome.written;
}

/** Sweeps the memberships of a group, taking them off the tenant's count. */
export async function deleteGroupMemberships(tenantId: number, groupId: number): Promise<void> {
  await deleteCountedMemberships(
    tenantId,
    await queryAll<{ pk: string; sk: string }>(stored.tenant.key({ tenantId }).pk, stored.membership.keyPrefix({ groupId }), {
      projection: 'pk, sk',
    }),
  );
}
