import * as stored from '#functions/core/store/entity-declarations.ts';
import type { TokenItem } from './token-repository.ts';

/**
 * Each token's last use, kept to the minute: at most one stamp a minute per token, so that reads stay
 * reads. The token item's `lastUsedAt`, which the authentication reads anyway, says whether one is due
 * (no request more when it is not); the owner's `tokensLastUsedAt`, by token hash, is what reading the
 * owner shows (GET /tenants/{id}, GET /tenant/agents, `client list`), with no read more.
 */
export const tokenUseIntervalMs = 60_000;

/**
 * What each stamp may write, for the functions that only read the table (lib/function-roles.ts): the
 * attributes it names, keys included, and the partitions it writes in. The token's stamp writes
 * `lastUsedAt` on token items only; the owner's writes `tokensLastUsedAt` on client and tenant
 * partitions only (an agent lives in its tenant's). Neither can change a token's owner, which token an
 * owner has, or any other attribute.
 */
export const tokenUseGrants = {
  token: { attributes: ['pk', 'sk', 'lastUsedAt'], partitions: [stored.token.partitionPrefix({})] },
  owner: {
    attributes: ['pk', 'sk', 'tokensLastUsedAt'],
    partitions: [stored.client.partitionPrefix({}), stored.tenant.partitionPrefix({})],
  },
} as const;

/** The update expressions of the stamps, by what each stamps. */
export const stampExpressions = {
  token: 'SET lastUsedAt = :at',
  owner: 'SET tokensLastUsedAt.#hash = :at',
  /** An owner written before tokens' uses were kept has no `tokensLastUsedAt` yet: its first stamp makes it. */
  firstOnOwner: 'SET tokensLastUsedAt = :first',
} as const;

/**
 * Whether a DynamoDB request's input is a stamp: the bookkeeping of the authentication, which the
 * bench and the read round-trip test leave out of a route's own requests (they count what the route
 * reads; a stamp runs beside it, at most once a minute per token).
 */
export function isTokenUseStamp(input: unknown): boolean {
  const expression =
    typeof input === 'object' && input !== null ? (input as { UpdateExpression?: unknown }).UpdateExpression : undefined;
  return Object.values(stampExpressions).some((stamp) => stamp === expression);
}

/** The ISO time a stamp interval before `nowMs`: a stamp older than it is due again. */
export const minuteBefore = (nowMs: number) => new Date(nowMs - tokenUseIntervalMs).toISOString();

/** Whether the token's use is due a stamp: never stamped, or last stamped a minute ago or more. */
export const tokenUseDue = (item: Pick<TokenItem, 'lastUsedAt'>, nowMs = Date.now()): boolean =>
  item.lastUsedAt === undefined || item.lastUsedAt < minuteBefore(nowMs);
