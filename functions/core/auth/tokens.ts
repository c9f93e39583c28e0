import { createHash, randomBytes } from 'node:crypto';

export type TokenKind = 'client' | 'tenant' | 'agent';

/** A readable prefix tells a leaked token's kind at a glance (and lets secret scanners match it). */
const prefixes: Record<TokenKind, string> = { client: 'cli', tenant: 'ten', agent: 'agt' };

/** 32 random bytes, base64url, behind the kind's prefix. Shown once; only its hash is stored. */
export function newToken(kind: TokenKind): string {
  return `${prefixes[kind]}_${randomBytes(32).toString('base64url')}`;
}

export function hashToken(token: string): string {
  return createHash('sha256').update(token, 'utf8').digest('hex');
}
