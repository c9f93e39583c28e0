import { GetCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import type { CreateUserBody } from '../api/validators/create-user.cjs';
import type { UpdateUserBody } from '../api/validators/update-user.cjs';
import { conflict, notFound } from '../errors.ts';
import { allocateIds, db, deleteAll, queryAll, queryPage, tableName, transact } from '../store/dynamo.ts';
import { keys } from '../store/keys.ts';

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
}

/** Spec 4.6's message: for an unknown login, a login of another tenant and a deleted user alike. */
export const userNotFound = () => notFound('Usuário não encontrado');

const loginTaken = (login: string) =>
  conflict(`A user with login ${JSON.stringify(login)} already exists in this tenant`, 'login_taken');

export const describeUser = (user: UserRecord) => ({
  id: user.userId,
  nome: user.nome,
  login: user.login,
  ...(user.email === undefined ? {} : { email: user.email }),
});

/** POST /tenant/users: the login is unique in the tenant (case-insensitively), claimed in the same transaction. */
export async function createUser(tenantId: number, input: CreateUserBody): Promise<UserRecord> {
  const [userId] = (await allocateIds(keys.tenantCounter(tenantId, 'user'), 1)) as [number];
  const now = new Date().toISOString();
  const user: UserRecord = { userId, tenantId, ...input, createdAt: now, updatedAt: now };
  const written = await transact([
    {
      Put: {
        TableName: tableName(),
        Item: { ...user, ...keys.user(tenantId, userId) },
        ConditionExpression: 'attribute_not_exists(pk)',
      },
    },
    {
      Put: {
        TableName: tableName(),
        Item: { ...keys.userLogin(tenantId, input.login), userId },
        ConditionExpression: 'attribute_not_exists(pk)',
      },
    },
  ]);
  if (!written) throw loginTaken(input.login);
  return user;
}

export async function findUser(tenantId: number, userId: number): Promise<UserRecord | undefined> {
  const result = await db().send(
    new GetCommand({ TableName: tableName(), Key: keys.user(tenantId, userId), ConsistentRead: true }),
  );
  return result.Item as UserRecord | undefined;
}

export async function requireUser(tenantId: number, userId: number): Promise<UserRecord> {
  const user = await findUser(tenantId, userId);
  if (!user) throw notFound('User not found');
  return user;
}

/** The user of a login in this tenant (two GetItems: the login, then the user). */
export async function findUserByLogin(tenantId: number, login: string): Promise<UserRecord | undefined> {
  const entry = await db().send(
    new GetCommand({ TableName: tableName(), Key: keys.userLogin(tenantId, login), ConsistentRead: true }),
  );
  return entry.Item ? findUser(tenantId, entry.Item.userId as number) : undefined;
}

/** PATCH /tenant/users/{id}: a new login moves its uniqueness claim in the same transaction. */
export async function updateUser(tenantId: number, userId: number, changes: UpdateUserBody) {
  const user = await requireUser(tenantId, userId);
  const next: UserRecord = { ...user, updatedAt: new Date().toISOString() };
  if (changes.login !== undefined) next.login = changes.login;
  if (changes.nome !== undefined) next.nome = changes.nome;
  if (changes.email === null) delete next.email;
  else if (changes.email !== undefined) next.email = changes.email;
  const loginMoves = keys.userLogin(tenantId, next.login).sk !== keys.userLogin(tenantId, user.login).sk;
  const written = await transact([
    {
      Put: {
        TableName: tableName(),
        Item: { ...next, ...keys.user(tenantId, userId) },
        ConditionExpression: 'updatedAt = :seen',
        ExpressionAttributeValues: { ':seen': user.updatedAt },
      },
    },
    ...(loginMoves
      ? [
          { Delete: { TableName: tableName(), Key: keys.userLogin(tenantId, user.login) } },
          {
            Put: {
              TableName: tableName(),
              Item: { ...keys.userLogin(tenantId, next.login), userId },
              ConditionExpression: 'attribute_not_exists(pk)',
            },
          },
        ]
      : []),
  ]);
  if (!written) {
    if (loginMoves && (await findUserByLogin(tenantId, next.login))) throw loginTaken(next.login);
    throw conflict('The user changed while this request ran; retry it');
  }
  return next;
}

/**
 * DELETE /tenant/users/{id}: unlinks the user. The user and its login go together; its login
 * tokens and sessions fail from then on, since both check that the user still exists. Its
 * memberships are swept after (readers ignore memberships of users that no longer exist).
 */
export async function deleteUser(tenantId: number, userId: number): Promise<void> {
  const user = await requireUser(tenantId, userId);
  const written = await transact([
    { Delete: { TableName: tableName(), Key: keys.user(tenantId, userId), ConditionExpression: 'attribute_exists(pk)' } },
    { Delete: { TableName: tableName(), Key: keys.userLogin(tenantId, user.login) } },
  ]);
  if (!written) throw notFound('User not found');
  const memberships = await queryAll<{ pk: string; sk: string }>(keys.userMembershipsIndex(tenantId, userId), '', {
    index: 'gsi1',
    projection: 'pk, sk',
  });
  await deleteAll(memberships);
}

/** POST /tenant/login/revoke: every login token issued and every session opened before now is void. */
export async function revokeLogins(tenantId: number, login: string): Promise<void> {
  const user = await findUserByLogin(tenantId, login);
  if (!user) throw userNotFound();
  // Whole seconds, as a token's iat: a token issued in this very second is void too.
  const revokedBefore = Math.floor(Date.now() / 1000) + 1;
  await db().send(
    new UpdateCommand({
      TableName: tableName(),
      Key: keys.user(tenantId, user.userId),
      UpdateExpression: 'SET revokedBefore = :revokedBefore',
      ConditionExpression: 'attribute_exists(pk)',
      ExpressionAttributeValues: { ':revokedBefore': revokedBefore },
    }),
  );
}

export async function listUsersPage(tenantId: number, limit: number, cursor: string | undefined) {
  return queryPage<UserRecord>({ partition: keys.tenant(tenantId).pk, prefix: keys.usersPrefix, limit, cursor });
}
