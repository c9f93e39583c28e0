import type { TransactItem } from '#functions/core/store/dynamo.ts';
import { keepTokenUntilWrite, newTokenWrite, revokeTokenWrite, type TokenOwner } from './token-repository.ts';
import { hashToken } from './tokens.ts';

/**
 * How long a rotation keeps the token it replaces working, in seconds: a day unless the caller says
 * otherwise (`previousValidForSeconds`, schemas/rotate-token.schema.json states the same bounds), at
 * most a week, 0 to end it at once. Long enough for a fleet of backends or agents to take the new token
 * one by one; short enough that a forgotten previous token does not linger.
 */
export const previousTokenGrace = { defaultSeconds: 86_400, maxSeconds: 604_800 } as const;

/**
 * The token fields of every owner of a token (a client, a tenant, an agent record). An owner has at
 * most two live tokens: its current one and, for a grace period after a rotation, the one that
 * rotation replaced.
 */
export interface OwnedTokens {
  /** SHA-256 of the current token. */
  tokenHash: string;
  /** SHA-256 of the token the last rotation replaced and kept working until `previousTokenExpiresAt`. */
  previousTokenHash?: string;
  previousTokenExpiresAt?: string;
  /**
   * When each of its tokens was last used, by SHA-256, to the minute (token-use.ts): kept on the
   * owner, so that reading the owner shows it without reading anything more. Rotations and the end of
   * a previous token drop the entries of tokens that no longer work.
   */
  tokensLastUsedAt?: Record<string, string>;
}

/** A rotation's answer: the owner's id, its new token (shown only here), until when the replaced one works (null: it stopped). */
export interface TokenRotated {
  id: number;
  token: string;
  previousExpiresAt: string | null;
}

/** What a rotation does to an owner and its tokens, for the owner's own transaction. */
export interface TokenRotation {
  /** The owner's update: `own` assignments (its `updatedAt`, say) and the token fields' (`:token…` values). */
  ownerUpdate(own?: readonly string[]): string;
  ownerValues: Record<string, unknown>;
  /** The new token's item. */
  newToken: TransactItem;
  /** The replaced token's item: kept until the grace period ends (conditional on it being there), or deleted. */
  replacedToken: TransactItem;
  /** The token an earlier rotation kept, deleted: only one previous token at a time. */
  endedTokens: TransactItem[];
  /** When the replaced token stops working; null when it stopped at once. */
  previousExpiresAt: string | null;
}

const updateExpression = (set: readonly string[], remove: readonly string[]) =>
  [set.length > 0 ? `SET ${set.join(', ')}` : '', remove.length > 0 ? `REMOVE ${remove.join(', ')}` : '']
    .filter(Boolean)
    .join(' ');

/** The entries of `tokensLastUsedAt` of the given hashes (the tokens that still work), the others dropped. */
const lastUsedOf = (owner: OwnedTokens, hashes: readonly (string | undefined)[]) =>
  Object.fromEntries(
    hashes.flatMap((hash) => {
      const used = hash === undefined ? undefined : owner.tokensLastUsedAt?.[hash];
      return hash !== undefined && used !== undefined ? [[hash, used]] : [];
    }),
  );

/**
 * Gives `owner` the new token `token` (signed for `tokenOwner`); the one it replaces keeps working for
 * `previousValidForSeconds` (the default grace when undefined; 0: it stops at once) and becomes the
 * owner's previous token, ending the previous token an earlier rotation kept. The caller joins the
 * owner's update to its own, conditioned on the owner's `tokenHash` being the one read, and commits
 * the token items with it.
 */
export function tokenRotation(
  owner: OwnedTokens,
  token: string,
  tokenOwner: TokenOwner,
  previousValidForSeconds: number = previousTokenGrace.defaultSeconds,
  nowMs = Date.now(),
): TokenRotation {
  if (
    !Number.isInteger(previousValidForSeconds) ||
    previousValidForSeconds < 0 ||
    previousValidForSeconds > previousTokenGrace.maxSeconds
  ) {
    throw new Error(`previousValidForSeconds must be a whole number from 0 to ${previousTokenGrace.maxSeconds}`);
  }
  // An operator's chosen token (LOCAL_CLIENT_TOKEN) could be the owner's previous one: it would be made and ended at once.
  if (hashToken(token) === owner.previousTokenHash) throw new Error('That token is the previous token: end it first');
  const keep = previousValidForSeconds > 0;
  const expiresAt = Math.floor(nowMs / 1000) + previousValidForSeconds;
  const previousExpiresAt = keep ? new Date(expiresAt * 1000).toISOString() : null;
  const set = ['tokenHash = :newTokenHash', 'tokensLastUsedAt = :tokensLastUsedAt'];
  const kept = keep ? ['previousTokenHash = :previousTokenHash', 'previousTokenExpiresAt = :previousTokenExpiresAt'] : [];
  return {
    ownerUpdate: (own = []) =>
      updateExpression([...own, ...set, ...kept], keep ? [] : ['previousTokenHash', 'previousTokenExpiresAt']),
    ownerValues: {
      ':newTokenHash': hashToken(token),
      // The replaced token's last use goes with it; the new token is unused.
      ':tokensLastUsedAt': lastUsedOf(owner, keep ? [owner.tokenHash] : []),
      ...(keep ? { ':previousTokenHash': owner.tokenHash, ':previousTokenExpiresAt': previousExpiresAt } : {}),
    },
    newToken: newTokenWrite(token, tokenOwner),
    replacedToken: keep ? keepTokenUntilWrite(owner.tokenHash, expiresAt) : revokeTokenWrite(owner.tokenHash),
    endedTokens: owner.previousTokenHash === undefined ? [] : [revokeTokenWrite(owner.previousTokenHash)],
    previousExpiresAt,
  };
}

/** What ending an owner's previous token does, for the owner's own transaction. */
export interface PreviousTokenEnd {
  /** The owner's update, to be conditioned on `previousTokenHash = :previousTokenHash` (the one read). */
  ownerUpdate(own?: readonly string[]): string;
  ownerValues: Record<string, unknown>;
  endedToken: TransactItem;
  /** Whether the previous token still worked (its grace period not over). */
  wasLive: boolean;
}

/** Ends the owner's previous token now; undefined when it has none (never rotated with a grace period, or ended). */
export function previousTokenEnd(owner: OwnedTokens, nowMs = Date.now()): PreviousTokenEnd | undefined {
  const previous = owner.previousTokenHash;
  if (previous === undefined) return undefined;
  return {
    ownerUpdate: (own = []) =>
      updateExpression([...own, 'tokensLastUsedAt = :tokensLastUsedAt'], ['previousTokenHash', 'previousTokenExpiresAt']),
    ownerValues: { ':previousTokenHash': previous, ':tokensLastUsedAt': lastUsedOf(owner, [owner.tokenHash]) },
    endedToken: revokeTokenWrite(previous),
    wasLive: previousTokenLive(owner, nowMs),
  };
}

/** Whether the owner's previous token still works. */
const previousTokenLive = (owner: OwnedTokens, nowMs: number) =>
  owner.previousTokenHash !== undefined &&
  owner.previousTokenExpiresAt !== undefined &&
  Date.parse(owner.previousTokenExpiresAt) > nowMs;

/** How an owner's tokens are used, as the routes that read the owner show it (schemas/responses/token-rotated.schema.json). */
export interface TokenUseView {
  currentToken: { lastUsedAt: string | null };
  previousToken: { expiresAt: string; lastUsedAt: string | null } | null;
}

export function tokenUseView(owner: OwnedTokens, nowMs = Date.now()): TokenUseView {
  const lastUsed = (hash: string) => owner.tokensLastUsedAt?.[hash] ?? null;
  return {
    currentToken: { lastUsedAt: lastUsed(owner.tokenHash) },
    previousToken:
      previousTokenLive(owner, nowMs) && owner.previousTokenHash && owner.previousTokenExpiresAt
        ? { expiresAt: owner.previousTokenExpiresAt, lastUsedAt: lastUsed(owner.previousTokenHash) }
        : null,
  };
}
