import type { AuthScheme } from '#functions/routes.ts';
import { forbidden, notFound, unauthorized, withArticle } from '#functions/core/errors.ts';
import { agentTenantLive, findTokenOwner, type TokenOwner, tokenExpired } from './token-repository.ts';
import { tokenUseDue } from './token-use.ts';
import { stampTokenUse } from './token-use-repository.ts';
import { hashToken, screenAuthorization, type TokenSubject } from './tokens.ts';

/**
 * Who is calling. `tokenId`, set by `authenticate`: the first 16 hex digits of the token's SHA-256,
 * which audit records keep to tell a rotation's two live tokens apart (never the token, nor its whole hash).
 */
export type Principal =
  | { kind: 'client'; clientId: number; tokenId?: string }
  | { kind: 'tenant'; clientId: number; tenantId: number; tokenId?: string }
  | { kind: 'agent'; clientId: number; tenantId: number; agentId: number; tokenId?: string }
  | { kind: 'anonymous' };

const tenantNotFound = () => notFound('Tenant not found', 'tenant_not_found');
const invalidToken = () => unauthorized('Invalid or expired token', 'Bearer error="invalid_token"');

/** Whether the token item's owner is the one the signed token names. */
const sameOwner = (item: TokenOwner, subject: TokenSubject) =>
  item.kind === subject.kind &&
  item.clientId === subject.clientId &&
  (subject.kind === 'client' || (item.kind !== 'client' && item.tenantId === subject.tenantId)) &&
  (subject.kind !== 'agent' || (item.kind === 'agent' && item.agentId === subject.agentId));

/** The OpenAPI security scheme of each kind of token, as the API description names them. */
export const schemeNames: Record<AuthScheme, string> = {
  client: 'clientBearerAuth',
  tenant: 'tenantBearerAuth',
  agent: 'agentBearerAuth',
};

/**
 * Resolves the Authorization header for a route that accepts `schemes` (empty: no auth).
 * A signed token (tokens.ts) is checked first, without I/O: a key the keyring does not have or a
 * wrong MAC is 401 at once, so a forged token costs no table read (nor, at the edge, a function
 * run). Then one consistent GetItem by the token's SHA-256, the authority, so a revoked token (a
 * rotated one, once its grace period is over) fails at once; a signed token whose item names another owner is 401 too. Unsigned tokens
 * (issued before tokens were signed) are looked up the same while UNSIGNED_TOKENS accepts them.
 * An unknown token is 401, and so is one past its `expiresAt` (a previous token whose grace period
 * is over: token-rotation.ts); a valid token of another kind than the route takes is 403, naming the
 * scheme the route needs; a deleted tenant's token is 404 `Tenant not found` (spec 4.4, 7), and
 * its agents' tokens 401 (the deletion revokes them, so an agent token is one read too:
 * token-repository.ts `revokedWithTenant`). A previous token is a token like the current one in
 * every other way.
 *
 * With `keepAlive`, a token whose last use is a minute old or more gets its use stamped (token-use.ts):
 * the stamp starts now, beside the route's own work, and is handed to `keepAlive`, for the caller to
 * await before the invocation returns (Lambda freezes what is still running); it never fails.
 */
export async function authenticate(
  authorization: string | undefined,
  schemes: readonly AuthScheme[],
  keepAlive?: (work: Promise<void>) => void,
): Promise<Principal> {
  return (await authenticateInParallel(authorization, schemes, keepAlive)).confirmed;
}

/**
 * `authenticate` in two parts, for a route that only reads (parallel authentication): once a signed
 * token's MAC checks out (no I/O: a forged or unknown-key token is 401 here), its owner is known, so
 * `provisional` is that owner, for the route to start its reads as, while `confirmed` looks the token
 * up as `authenticate` does (revocation, deletion, kind, owner). The caller answers only once
 * `confirmed` holds, and its failure wins over whatever the reads found: a revoked token's request
 * reads, but never receives what it read. An unsigned token, or a signed one of a kind the route does
 * not take, has no provisional principal: the caller waits for `confirmed` first.
 */
export async function authenticateInParallel(
  authorization: string | undefined,
  schemes: readonly AuthScheme[],
  keepAlive?: (work: Promise<void>) => void,
): Promise<{ provisional?: Principal; confirmed: Promise<Principal> }> {
  if (schemes.length === 0) return { provisional: { kind: 'anonymous' }, confirmed: Promise.resolve({ kind: 'anonymous' }) };
  const screening = await screenAuthorization(authorization);
  if ('refused' in screening) throw screening.refused === 'missing' ? unauthorized('Missing bearer token') : invalidToken();
  const tokenHash = hashToken(screening.token);
  const subject = screening.signed?.subject;
  const tokenId = tokenHash.slice(0, 16);
  return {
    provisional: subject && schemes.includes(subject.kind) ? ({ ...subject, tokenId } as Principal) : undefined,
    confirmed: lookUp(tokenHash, screening.signed?.subject, schemes, keepAlive),
  };
}

/** The token's item, and every check `authenticate` makes of it: the principal it confirms, or the error. */
async function lookUp(
  tokenHash: string,
  signedSubject: TokenSubject | undefined,
  schemes: readonly AuthScheme[],
  keepAlive: ((work: Promise<void>) => void) | undefined,
): Promise<Principal> {
  const item = await findTokenOwner(tokenHash);
  const now = Date.now();
  if (!item || tokenExpired(item, now) || (signedSubject && !sameOwner(item, signedSubject))) throw invalidToken();
  if (!schemes.includes(item.kind)) {
    const needed = schemes.map((scheme) => `${withArticle(scheme)} token (${schemeNames[scheme]})`).join(' or ');
    throw forbidden(`This route takes ${needed}; this is ${withArticle(item.kind)} token`, 'wrong_token_kind');
  }
  if (item.kind === 'tenant' && item.tenantDeleted) throw tenantNotFound();
  // A token of a deleted tenant's agent is no token (401), on every agent route. The deletion revokes every token
  // whose item says so (`revokedWithTenant`): that item is the whole check. Only a token without it reads its tenant.
  if (item.kind === 'agent' && !item.revokedWithTenant && !(await agentTenantLive(item.tenantId))) throw invalidToken();
  if (keepAlive && tokenUseDue(item, now)) keepAlive(stampTokenUse(tokenHash, item, now));
  return { ...principalOf(item), tokenId: tokenHash.slice(0, 16) } as Principal;
}

function principalOf(item: TokenOwner): Principal {
  if (item.kind === 'client') return { kind: 'client', clientId: item.clientId };
  if (item.kind === 'agent') return { kind: 'agent', clientId: item.clientId, tenantId: item.tenantId, agentId: item.agentId };
  return { kind: 'tenant', clientId: item.clientId, tenantId: item.tenantId };
}

/** A stable name of the caller, for keys that must not collide between callers. */
export function principalScope(principal: Principal): string {
  if (principal.kind === 'client') return `client:${principal.clientId}`;
  if (principal.kind === 'tenant') return `tenant:${principal.tenantId}`;
  if (principal.kind === 'agent') return `agent:${principal.tenantId}:${principal.agentId}`;
  return 'anonymous';
}

/** The route table guarantees the kind; a mismatch is a wiring bug, not a client error. */
export function clientIdOf(principal: Principal): number {
  if (principal.kind !== 'client') throw new Error(`Expected a client principal, got ${principal.kind}`);
  return principal.clientId;
}

export function tenantOf(principal: Principal): { tenantId: number; clientId: number } {
  if (principal.kind !== 'tenant') throw new Error(`Expected a tenant principal, got ${principal.kind}`);
  return { tenantId: principal.tenantId, clientId: principal.clientId };
}

export const tenantIdOf = (principal: Principal): number => tenantOf(principal).tenantId;

export function agentOf(principal: Principal): { clientId: number; tenantId: number; agentId: number } {
  if (principal.kind !== 'agent') throw new Error(`Expected an agent principal, got ${principal.kind}`);
  return { clientId: principal.clientId, tenantId: principal.tenantId, agentId: principal.agentId };
}
