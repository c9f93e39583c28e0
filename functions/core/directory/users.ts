import type { CreateUserBody } from '#functions/core/api/validators/create-user.cjs';
import type { UpdateUserBody } from '#functions/core/api/validators/update-user.cjs';
import { conflict, notFound } from '#functions/core/errors.ts';
import { recordFollowUp } from '#functions/core/follow-ups/follow-up-repository.ts';
import { type Resumable, unrecorded } from '#functions/core/store/resumable.ts';
import {
  allocateUserId,
  deleteUserAndLogin,
  findLoginClaim,
  findUser,
  insertUser,
  replaceUser,
  type UserRecord,
} from './directory-repository.ts';
import { maxUsersPerTenant } from './quotas.ts';

/** Spec 4.6's message: for an unknown login, a login of another tenant and a deleted user alike. */
export const userNotFound = () => notFound('Usuário não encontrado', 'login_not_found');

const loginTaken = (login: string) =>
  conflict(`A user with login ${JSON.stringify(login)} already exists in this tenant`, 'login_taken');

export const describeUser = (user: UserRecord) => ({
  id: user.userId,
  nome: user.nome,
  login: user.login,
  ...(user.email === undefined ? {} : { email: user.email }),
});

/**
 * Who holds a login's claim when a write found it taken: `taken` when a user has it, else the user
 * it names who is gone (a claim left behind, which the write may take over), or `free` when the
 * claim is gone since.
 */
async function claimHolder(tenantId: number, login: string): Promise<'taken' | 'free' | { staleOwner: number }> {
  const holder = await findLoginClaim(tenantId, login);
  if (holder === undefined) return 'free';
  return (await findUser(tenantId, holder)) ? 'taken' : { staleOwner: holder };
}

/** Tries a write that claims a login until it is done or the login is some user's: a claim whose user is gone is taken over. */
async function withLoginClaim(tenantId: number, login: string, write: (staleOwner?: number) => Promise<boolean>): Promise<void> {
  let staleOwner: number | undefined;
  for (let attempt = 0; attempt < 4; attempt++) {
    if (await write(staleOwner)) return;
    const holder = await claimHolder(tenantId, login);
    if (holder === 'taken') throw loginTaken(login);
    staleOwner = holder === 'free' ? undefined : holder.staleOwner;
  }
  throw loginTaken(login);
}

/** 409 when the tenant has as many users as it may. */
const userLimit = (max: number) => conflict(`A tenant has at most ${max.toLocaleString('en')} users`, 'user_limit');

/**
 * POST /tenant/users: the login is unique in the tenant (as a reader sees it: names.ts), claimed in the same
 * transaction; a claim left by a user who is gone is taken over (conditional on it still naming them).
 * At most `max` users (`maxUsersPerTenant`; tests pass smaller ones): the tenant's user count,
 * conditioned in the user's own transaction, keeps it under concurrency.
 */
export async function createUser(
  tenantId: number,
  input: CreateUserBody,
  record: Resumable<UserRecord> = unrecorded(),
  max = maxUsersPerTenant,
): Promise<UserRecord> {
  const userId = await allocateUserId(tenantId);
  const now = new Date().toISOString();
  const user: UserRecord = { userId, tenantId, ...input, createdAt: now, updatedAt: now };
  await withLoginClaim(tenantId, input.login, async (staleOwner) => {
    const outcome = await insertUser(user, record.finish(user), max, staleOwner);
    if (outcome === 'limit') throw userLimit(max);
    return outcome === 'written';
  });
  return user;
}

export async function requireUser(tenantId: number, userId: number): Promise<UserRecord> {
  const user = await findUser(tenantId, userId);
  if (!user) throw notFound('User not found', 'user_not_found');
  return user;
}

const concurrentChange = () => conflict('The user changed while this request ran; retry it', 'concurrent_change');

/**
 * PATCH /tenant/users/{id}: a new login moves its uniqueness claim in the same transaction, on the
 * user as read. The old claim is deleted only while it is the user's; the new one is taken only while
 * it is free or names a user who is gone.
 */
export async function updateUser(tenantId: number, userId: number, changes: UpdateUserBody) {
  const user = await requireUser(tenantId, userId);
  const next: UserRecord = { ...user, updatedAt: new Date().toISOString() };
  if (changes.login !== undefined) next.login = changes.login;
  if (changes.nome !== undefined) next.nome = changes.nome;
  if (changes.email === null) delete next.email;
  else if (changes.email !== undefined) next.email = changes.email;
  let releaseOld = true;
  let changed = false;
  await withLoginClaim(tenantId, next.login, async (staleOwner) => {
    for (;;) {
      const { outcome } = await replaceUser(user, next, { staleOwner, releaseOld });
      if (outcome === 'written') return true;
      if (outcome === 'changed') {
        changed = true;
        return true;
      }
      if (outcome === 'login_taken') return false;
      // The old claim names another user (left so by an earlier version): it is theirs, leave it.
      releaseOld = false;
    }
  });
  if (changed) {
    if (!(await findUser(tenantId, userId))) throw notFound('User not found', 'user_not_found');
    throw concurrentChange();
  }
  return next;
}

/**
 * DELETE /tenant/users/{id}: unlinks the user. The user as read and the login claim it holds go
 * together, with the follow-up that sweeps what the user leaves (memberships, owner and permission
 * records: there may be more than a transaction holds); readers ignore those of users that no
 * longer exist. A rename meanwhile moved the claim: the user is read again and the deletion retried,
 * so the claim deleted is always the one the user holds. Its login tokens and sessions fail from
 * then on, since both check that the user still exists.
 */
export async function deleteUser(tenantId: number, userId: number): Promise<void> {
  const sweep = recordFollowUp({ kind: 'sweep-user', ownerId: tenantId, subjectId: userId });
  let releaseClaim = true;
  for (let attempt = 0; attempt < 8; attempt++) {
    const user = await requireUser(tenantId, userId);
    const outcome = await deleteUserAndLogin(user, [sweep], releaseClaim);
    if (outcome === 'deleted') return;
    // The old claim names another user (left so by an earlier version): it is theirs, leave it.
    if (outcome === 'claim_not_held') releaseClaim = false;
  }
  throw concurrentChange();
}
