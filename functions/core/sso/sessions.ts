import { createHash, randomBytes } from 'node:crypto';
import { findUser, type UserRecord } from '#functions/core/directory/directory-repository.ts';
import { findTenant, type TenantRecord } from '#functions/core/tenants/tenant-repository.ts';
import { issueInstant, voidUntil } from './revocation.ts';
import { findSession, insertSession, type SessionRecord, type UiFlags } from './session-repository.ts';

/**
 * `__Host-`: browsers keep such a cookie only when it is Secure, for Path=/ and without Domain, so
 * no sibling host under the tenants' base domain can set one that would shadow this host's (a
 * tossed cookie logging the user out, or fixing a session on them).
 */
export const sessionCookieName = '__Host-bi_session';
export const sessionLifetimeSeconds = 8 * 60 * 60;

const hashOf = (sessionId: string) => createHash('sha256').update(sessionId).digest('hex');

/**
 * Whether a user may still use what was issued to them at `issuedAtMs` (epoch milliseconds): the
 * tenant is active and was not deactivated since, the user is still linked, and their logins were
 * not revoked since (revocation.ts: what was issued up to `voidUntil`, inclusive, is void). Also
 * says until when, for what is issued next (`issueInstant`).
 */
export async function stillEntitled(
  tenantId: number,
  userId: number,
  issuedAtMs: number,
): Promise<{ tenant: TenantRecord; user: UserRecord; voidUntil: number | undefined } | undefined> {
  const [tenant, user] = await Promise.all([findTenant(tenantId), findUser(tenantId, userId)]);
  if (!tenant || tenant.deletedAt || !tenant.ativo || !user) return undefined;
  const until = voidUntil(tenant, user);
  if (until !== undefined && issuedAtMs <= until) return undefined;
  return { tenant, user, voidUntil: until };
}

/**
 * A new session: 32 random bytes in an HttpOnly, Secure, SameSite=None, Partitioned cookie (so it
 * works in a third-party iframe), stored only as a hash, expiring with the table's TTL. It is
 * opened at `now`, or just after `until` (`voidUntil` as the landing read it) when the clock is
 * behind the one that revoked.
 */
export async function openSession(
  user: Pick<UserRecord, 'tenantId' | 'userId' | 'login'>,
  flags: UiFlags,
  now = Date.now(),
  until?: number,
): Promise<string> {
  const sessionId = randomBytes(32).toString('base64url');
  const createdAtMs = issueInstant(now, until);
  const session: SessionRecord = {
    tenantId: user.tenantId,
    userId: user.userId,
    login: user.login,
    ...flags,
    createdAt: Math.floor(createdAtMs / 1000),
    createdAtMs,
    expiresAt: Math.floor(now / 1000) + sessionLifetimeSeconds,
  };
  await insertSession(hashOf(sessionId), session);
  return `${sessionCookieName}=${sessionId}; Path=/; Max-Age=${sessionLifetimeSeconds}; HttpOnly; Secure; SameSite=None; Partitioned`;
}

/** GET /auth/session: the session of the cookie, if it is alive on this tenant host. */
export async function readSession(cookies: readonly string[], host: string, now = Date.now()) {
  const sessionId = cookies
    .map((cookie) => cookie.split('='))
    .find(([name]) => name?.trim() === sessionCookieName)?.[1]
    ?.trim();
  if (!sessionId) return undefined;
  const session = await findSession(hashOf(sessionId));
  // TTL deletion lags by up to days: expiry is checked here too.
  if (!session || session.expiresAt <= Math.floor(now / 1000)) return undefined;
  // A session opened before milliseconds has only its second: the second's start, so a revocation in that
  // second voids it, as it did.
  const entitled = await stillEntitled(session.tenantId, session.userId, session.createdAtMs ?? session.createdAt * 1000);
  // A changed login is another identity in the BI: the session opened for the old one ends.
  if (!entitled || entitled.tenant.dominio !== host || entitled.user.login !== session.login) return undefined;
  return {
    user: { id: entitled.user.userId, nome: entitled.user.nome, login: entitled.user.login },
    tenant: { id: entitled.tenant.tenantId, nome: entitled.tenant.nome, dominio: entitled.tenant.dominio },
    ui: { showMenu: session.showMenu ?? null, showDesksIcon: session.showDesksIcon ?? '1' },
    expiresAt: new Date(session.expiresAt * 1000).toISOString(),
  };
}
