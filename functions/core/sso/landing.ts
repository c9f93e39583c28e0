import type { UiFlags } from './session-repository.ts';
import { openSession, stillEntitled } from './sessions.ts';
import { issuedAtMs, type TokenProblem, verifyLoginToken } from './login-tokens.ts';
import { resolveSitePath, siteRoot } from './site-path.ts';

export type LandingProblem = TokenProblem | 'revoked' | 'malformed_ref';

export class LandingError extends Error {
  constructor(readonly problem: LandingProblem) {
    super(`Landing refused: ${problem}`);
  }
}

const flag = (value: string | undefined): '0' | '1' | undefined => (value === '0' || value === '1' ? value : undefined);

/** Base64 (standard or URL-safe, padded or not) of a UTF-8 route; anything else is a malformed ref. */
export function decodeRef(ref: string): string {
  if (!/^[A-Za-z0-9+/_-]*={0,2}$/.test(ref) || ref.length % 4 === 1) throw new LandingError('malformed_ref');
  try {
    return new TextDecoder('utf-8', { fatal: true }).decode(Buffer.from(ref.replace(/-/g, '+').replace(/_/g, '/'), 'base64'));
  } catch {
    throw new LandingError('malformed_ref');
  }
}

/**
 * Where the landing sends the browser: the route as resolved on this same site (see
 * `resolveSitePath`) with the UI flags, else `/`. What it returns is always a path that starts with
 * exactly one slash, so no browser can read it as another host.
 */
export function safeRedirectTarget(route: string | undefined, flags: UiFlags): string {
  const target = (route === undefined ? undefined : resolveSitePath(route)) ?? siteRoot();
  if (flags.showMenu) target.searchParams.set('showMenu', flags.showMenu);
  if (flags.showDesksIcon) target.searchParams.set('showDesksIcon', flags.showDesksIcon);
  const location = `${target.pathname}${target.search}${target.hash}`;
  return /^\/(?![/\\])/.test(location) ? location : '/';
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
  const entitled = await stillEntitled(claims.tid, Number(claims.sub), issuedAtMs(claims));
  if (!entitled || entitled.user.login !== claims.login || entitled.tenant.dominio !== host) throw new LandingError('revoked');
  const flags: UiFlags = { showMenu: flag(query.showMenu), showDesksIcon: flag(query.showDesksIcon) };
  const cookie = await openSession(entitled.user, flags, now, entitled.voidUntil);
  return { location: safeRedirectTarget(route, flags), cookie };
}
