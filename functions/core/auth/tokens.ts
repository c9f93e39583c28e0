import { createHash, randomBytes } from 'node:crypto';

export type TokenKind = 'client' | 'tenant' | 'agent';

/** Who a token belongs to: the principal it authenticates. */
export type TokenOwner =
  | { kind: 'client'; clientId: number }
  | { kind: 'tenant'; clientId: number; tenantId: number }
  | { kind: 'agent'; clientId: number; tenantId: number; agentId: number };

/** A readable prefix tells a leaked token's kind at a glance (and lets secret scanners match it). */
const prefixes: Record<TokenKind, string> = { client: 'cli', tenant: 'ten', agent: 'agt' };

/** The owner's ids, outermost first. */
export const ownerIds = (owner: TokenOwner): number[] =>
  owner.kind === 'client'
    ? [owner.clientId]
    : owner.kind === 'tenant'
      ? [owner.clientId, owner.tenantId]
      : [owner.clientId, owner.tenantId, owner.agentId];

/**
 * The kind's prefix, the owner's ids and 32 random bytes (base64url): `ten_7.42.<secret>`. Shown
 * once; only its hash is stored. The ids only let a read start before the token is looked up
 * (claimedOwner); the lookup alone decides whom the token authenticates.
 */
export function newToken(owner: TokenOwner): string {
  return `${prefixes[owner.kind]}_${ownerIds(owner).join('.')}.${randomBytes(32).toString('base64url')}`;
}

const claimPattern = /^(cli|ten|agt)_((?:[1-9][0-9]{0,15}\.){1,3})[A-Za-z0-9_-]{43}$/;

/**
 * The owner a token says it has, unverified: anyone can write any ids into a token. Undefined for
 * tokens without ids (made before they carried them, or given by an operator).
 */
export function claimedOwner(token: string): TokenOwner | undefined {
  const match = claimPattern.exec(token);
  if (!match?.[1] || !match[2]) return undefined;
  const ids = match[2].slice(0, -1).split('.').map(Number);
  if (!ids.every(Number.isSafeInteger)) return undefined;
  const [clientId = 0, tenantId = 0, agentId = 0] = ids;
  if (match[1] === 'cli' && ids.length === 1) return { kind: 'client', clientId };
  if (match[1] === 'ten' && ids.length === 2) return { kind: 'tenant', clientId, tenantId };
  if (match[1] === 'agt' && ids.length === 3) return { kind: 'agent', clientId, tenantId, agentId };
  return undefined;
}

export function hashToken(token: string): string {
  return createHash('sha256').update(token, 'utf8').digest('hex');
}
