import { findUserByLogin } from '#functions/core/directory/directory-repository.ts';
import { userNotFound } from '#functions/core/directory/users.ts';
import type { RevocableUser } from './revocation.ts';
import { stampRevocation } from './session-repository.ts';

/**
 * POST /tenant/login/revoke: every login token issued and every session opened up to now (to the
 * millisecond) is void; what is issued after works. The stamp never moves back (a revoking clock
 * behind the previous one's).
 */
export async function revokeLogins(tenantId: number, login: string, now = Date.now()): Promise<void> {
  const user: RevocableUser | undefined = await findUserByLogin(tenantId, login);
  if (!user) throw userNotFound();
  const revokedAtMs = Math.max(now, user.revokedAtMs ?? now);
  if (!(await stampRevocation(tenantId, user.userId, revokedAtMs))) throw userNotFound();
}
