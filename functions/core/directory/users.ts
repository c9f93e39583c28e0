import type { CreateUserBody } from '#functions/core/api/validators/create-user.cjs';
import type { UpdateUserBody } from '#functions/core/api/validators/update-user.cjs';
import { conflict, notFound } from '#functions/core/errors.ts';
import { recordFollowUp } from '#functions/core/follow-ups/follow-up-repository.ts';
import { type Resumable, unrecorded } from '#functions/core/store/resumable.ts';
import {
  allocateUserId,
  deleteUserAndLogin,
  findUser,
  findUserByLogin,
  insertUser,
  replaceUser,
  setRevokedBefore,
  type UserRecord,
} from './directory-repository.ts';

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
export async function createUser(
  tenantId: number,
  input: CreateUserBody,
  record: Resumable<UserRecord> = unrecorded(),
): Promise<UserRecord> {
  const userId = await allocateUserId(tenantId);
  const now = new Date().toISOString();
  const user: UserRecord = { userId, tenantId, ...input, createdAt: now, updatedAt: now };
  if (!(await insertUser(user, record.finish(user)))) throw loginTaken(input.login);
  return user;
}

export async function requireUser(tenantId: number, userId: number): Promise<UserRecord> {
  const user = await findUser(tenantId, userId);
  if (!user) throw notFound('User not found');
  return user;
}

/** PATCH /tenant/users/{id}: a new login moves its uniqueness claim in the same transaction. */
export async function updateUser(tenantId: number, userId: number, changes: UpdateUserBody) {
  const user = await requireUser(tenantId, userId);
  const next: UserRecord = { ...user, updatedAt: new Date().toISOString() };
  if (changes.login !== undefined) next.login = changes.login;
  if (changes.nome !== undefined) next.nome = changes.nome;
  if (changes.email === null) delete next.email;
  else if (changes.email !== undefined) next.email = changes.email;
  const { written, loginMoved } = await replaceUser(user, next);
  if (!written) {
    if (loginMoved && (await findUserByLogin(tenantId, next.login))) throw loginTaken(next.login);
    throw conflict('The user changed while this request ran; retry it', 'concurrent_change');
  }
  return next;
}

/**
 * DELETE /tenant/users/{id}: unlinks the user. The user and its login go together, with the
 * follow-up that sweeps what the user leaves (memberships, owner and permission records: there may
 * be more than a transaction holds); readers ignore those of users that no longer exist. Its login
 * tokens and sessions fail from then on, since both check that the user still exists.
 */
export async function deleteUser(tenantId: number, userId: number): Promise<void> {
  const user = await requireUser(tenantId, userId);
  const sweep = recordFollowUp({ kind: 'sweep-user', ownerId: tenantId, subjectId: userId });
  if (!(await deleteUserAndLogin(user, [sweep]))) throw notFound('User not found');
}

/** POST /tenant/login/revoke: every login token issued and every session opened before now is void. */
export async function revokeLogins(tenantId: number, login: string): Promise<void> {
  const user = await findUserByLogin(tenantId, login);
  if (!user) throw userNotFound();
  // Whole seconds, as a token's iat: a token issued in this very second is void too.
  await setRevokedBefore(tenantId, user.userId, Math.floor(Date.now() / 1000) + 1);
}
