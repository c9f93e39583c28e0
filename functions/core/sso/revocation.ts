import type { UserRecord } from '#functions/core/directory/directory-repository.ts';
import type { TenantRecord } from '#functions/core/tenants/tenant-repository.ts';

/**
 * The user item's revocation stamp, in milliseconds (written by `revokeLogins`, revoke-logins.ts).
 * Beside it, the user keeps `revokedBefore` (epoch seconds, the first second after the
 * revocation's), which versions before milliseconds wrote and read; it is still written for them.
 */
export type RevocableUser = UserRecord & { revokedAtMs?: number };

const maxOf = (instants: ReadonlyArray<number | undefined>): number | undefined => {
  const known = instants.filter((instant): instant is number => instant !== undefined);
  return known.length === 0 ? undefined : Math.max(...known);
};

/**
 * The instant (epoch ms) up to which, inclusive, whatever was issued to the user (login tokens,
 * sessions) is void, or undefined when nothing is: the later of the user's revocation and the
 * tenant's last deactivation. Millisecond stamps are compared as they are. A stamp in seconds (from
 * before milliseconds) keeps the meaning it had: the user's `revokedBefore` S voids what was issued
 * before second S (up to S × 1000 − 1 ms), the tenant's `sessionsValidAfter` V what was issued in
 * second V or earlier (up to V × 1000 + 999 ms). A seconds stamp that only shadows the millisecond
 * stamp beside it (same second or earlier: both written by one revocation or deactivation, the
 * seconds one for the previous version during a deploy) is not read, or it would void the whole
 * second again; one written later by the previous version is.
 */
export function voidUntil(
  tenant: Pick<TenantRecord, 'sessionsValidAfter' | 'sessionsValidAfterMs'>,
  user: Pick<RevocableUser, 'revokedBefore' | 'revokedAtMs'>,
): number | undefined {
  const { revokedAtMs, revokedBefore } = user;
  const userSeconds =
    revokedBefore !== undefined && (revokedAtMs === undefined || Math.floor(revokedAtMs / 1000) + 1 < revokedBefore)
      ? revokedBefore * 1000 - 1
      : undefined;
  const { sessionsValidAfterMs, sessionsValidAfter } = tenant;
  const tenantSeconds =
    sessionsValidAfter !== undefined &&
    (sessionsValidAfterMs === undefined || Math.floor(sessionsValidAfterMs / 1000) < sessionsValidAfter)
      ? sessionsValidAfter * 1000 + 999
      : undefined;
  return maxOf([revokedAtMs, userSeconds, sessionsValidAfterMs, tenantSeconds]);
}

/**
 * When something issued `now` is taken to be issued: `now`, or just after the last revocation the
 * issuer has read if its clock is behind the one that revoked. What is issued after a revocation
 * was read is never void by it; what was issued before it was recorded is.
 */
export const issueInstant = (now: number, until: number | undefined): number =>
  until === undefined ? now : Math.max(now, until + 1);
