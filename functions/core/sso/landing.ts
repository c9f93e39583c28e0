import type { UiFlags } from './session-repository.ts';
import { openSession, stillEntitled } from './sessions.ts';
import { type TokenProblem, verifyLoginToken } from './login-tokens.ts';

export type LandingProblem = TokenProblem | 'revoked' | 'malformed_ref';

export class LandingError extends Error {
  constructor(readonly problem: LandingProblem) {
    super(`Landing refused: ${problem}`);
  }
}

const flag = (value: string | undefined): '0' | '1' | undefined => (value === '0' || value === '1' ? value : undefined);

/** Base64 (standard or URL-safe) of a UTF-8 route; anything else is a malformed ref. */
function decodeRef(ref: string): string {
  if (!/^[A-Za-z0-9+/_-]*={0,2}$/.test(ref) || ref.length % 4 === 1) throw new LandingError('malformed_ref');
  try {
    return new TextDecoder('utf-8', { fatal: true }).decode(Buffer.from(ref.replace(/-/g, '+').replace(/_/g, '/'), 'base64'));
  } catch {
    throw new LandingError('malformed_ref');
  }
}

/**
 * Where the landing may send the browser: a path on this same host, never elsewhere. A route that
 * is not a plain relative path (`//evil`, `https://evil`, `javascript:`, `/\\evil`, control
 * characters) sends it to `/`.
 */
export function safeRedirectTarget(route: string | undefined, flags: UiFlags): string {
  const base = 'https://tenant.invalid';
  // eslint-disable-next-line no-control-regex -- refusing control characters is the point
  const relative = route !== undefined && /^\/(?![/\\])[^\u0000-\u001f\u007f\\]*$/.test(route);
  const target = new URL(relative ? route : '/', base);
  if (target.origin !== base) return '/';
  if (flags.showMenu) target.searchParams.set('showMenu', flags.showMenu);
  if (flags.showDesksIcon) target.searchParams.set('showDesksIcon', flags.showDesksIcon);
  return `${target.pathname}${target.search}${target.hash}`;
}

/**
 * GET /auth/api/{token}: verifies the login token for this host (signature, algorithm, expiry,
 * audience), that the tenant is active and the user still linked and not revoked; then opens a
 * session and says where to redirect.
 */
export async function land(
  token: string,
  host: string,
  query: { ref?: string; showMenu?: string; showDesksIcon?: string },
  now = Date.now(),
): Promise<{ location: string; cookie: string }> {
  const claims = await verifyLoginToken(token, host, now).catch((error: { problem?: TokenProblem }) => {
    throw new LandingError(error.problem ?? 'invalid');
  });
  const route = query.ref === undefined ? undefined : decodeRef(query.ref);
  const entitled = await stillEntitled(claims.tid, Number(claims.sub), claims.iat);
  if (!entitled || entitled.user.login !== claims.login || entitled.tenant.dominio !== host) throw new LandingError('revoked');
  const flags: UiFlags = { showMenu: flag(query.showMenu), showDesksIcon: flag(query.showDesksIcon) };
  const cookie = await openSession(claims.tid, entitled.user.userId, flags, now);
  return { location: safeRedirectTarget(route, flags), cookie };
}
