import { createHash, createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import { mintingKey, tokenMacKey } from './token-keys.ts';

export type TokenKind = 'client' | 'tenant' | 'agent';

/** Whom a token is for: its kind and its owner's ids. */
export type TokenSubject =
  | { kind: 'client'; clientId: number }
  | { kind: 'tenant'; clientId: number; tenantId: number }
  | { kind: 'agent'; clientId: number; tenantId: number; agentId: number };

/** The owner's ids of a token of kind `K`. */
export type TokenOwnerIds<K extends TokenKind> = Omit<Extract<TokenSubject, { kind: K }>, 'kind'>;

/** A readable prefix tells a leaked token's kind at a glance (and lets secret scanners match it). */
const prefixes: Record<TokenKind, string> = { client: 'cli', tenant: 'ten', agent: 'agt' };
const kindOfPrefix: Record<string, TokenKind> = { cli: 'client', ten: 'tenant', agt: 'agent' };
/** How many ids the owner part has, per prefix: client; client-tenant; client-tenant-agent. */
const ownerArity: Record<string, number> = { cli: 1, ten: 2, agt: 3 };

/**
 * The signed form of a token (DESIGN.md 5), the one definition of it (the edge function,
 * functions/edge/viewer-request.js, spells the same; a property test holds them together):
 *
 *   `<prefix>_<keyId>.<owner>.<random>.<mac>`
 *
 * - prefix `cli` | `ten` | `agt`, the kind;
 * - keyId, the MAC key's id: a decimal without leading zeros, at most 6 digits;
 * - owner, the owner's ids joined by `-`: client `<clientId>`, tenant `<clientId>-<tenantId>`,
 *   agent `<clientId>-<tenantId>-<agentId>`, each a positive decimal without leading zeros of at
 *   most 15 digits, as many as the kind has;
 * - random, 32 random bytes in base64url without padding (43 characters);
 * - mac, HMAC-SHA256 under key keyId over `<prefix>_<keyId>.<owner>.<random>`, base64url without
 *   padding (43 characters).
 *
 * `.` never occurs in base64url, so the parts are unambiguous. Any other token is "unsigned": those
 * issued before tokens were signed, and the ones operators choose (LOCAL_CLIENT_TOKEN).
 */
export const signedTokenPattern =
  /^(cli|ten|agt)_([1-9][0-9]{0,5})\.([1-9][0-9]{0,14}(?:-[1-9][0-9]{0,14}){0,2})\.([A-Za-z0-9_-]{43})\.([A-Za-z0-9_-]{43})$/;

/** A token of the signed form, in parts. Parsing says nothing of its MAC: `macMatches` does. */
export interface SignedToken {
  subject: TokenSubject;
  keyId: string;
  /** What the MAC covers: everything before the last `.`. */
  signedText: string;
  mac: string;
}

/** The parts of a token of the signed form; undefined for any other string. */
export function parseSignedToken(token: string): SignedToken | undefined {
  const match = signedTokenPattern.exec(token);
  if (!match) return undefined;
  const [, prefix, keyId, owner, random, mac] = match as unknown as [string, string, string, string, string, string];
  const ids = owner.split('-').map(Number) as [number, number?, number?];
  if (ids.length !== ownerArity[prefix]) return undefined;
  const kind = kindOfPrefix[prefix] as TokenKind;
  const [clientId, tenantId, agentId] = ids;
  const subject: TokenSubject =
    kind === 'client'
      ? { kind, clientId }
      : kind === 'tenant'
        ? { kind, clientId, tenantId: tenantId as number }
        : { kind, clientId, tenantId: tenantId as number, agentId: agentId as number };
  return { subject, keyId, signedText: `${prefix}_${keyId}.${owner}.${random}`, mac };
}

/** The MAC of a token's signed text under a key's secret text (its UTF-8 bytes are the HMAC key). */
export const tokenMac = (signedText: string, secret: string): string =>
  createHmac('sha256', Buffer.from(secret, 'utf8')).update(signedText, 'utf8').digest('base64url');

/** Whether the token's MAC is the one `secret` makes, compared in constant time. */
export function macMatches(token: SignedToken, secret: string): boolean {
  const expected = Buffer.from(tokenMac(token.signedText, secret), 'utf8');
  const given = Buffer.from(token.mac, 'utf8');
  return expected.length === given.length && timingSafeEqual(expected, given);
}

const ownerText = (ids: readonly number[]) => {
  for (const id of ids) {
    if (!Number.isSafeInteger(id) || id < 1 || id > 999_999_999_999_999) throw new Error(`Not a token owner id: ${id}`);
  }
  return ids.join('-');
};

/**
 * A new token for `owner`, signed with the current token key (token-keys.ts). Shown once; only its
 * hash is stored (token-repository.ts).
 */
export async function newToken<K extends TokenKind>(kind: K, owner: TokenOwnerIds<K>): Promise<string> {
  const ids = owner as { clientId: number; tenantId?: number; agentId?: number };
  const owned = [
    ids.clientId,
    ...(kind === 'client' ? [] : [ids.tenantId as number]),
    ...(kind === 'agent' ? [ids.agentId as number] : []),
  ];
  const { keyId, secret } = await mintingKey();
  const signedText = `${prefixes[kind]}_${keyId}.${ownerText(owned)}.${randomBytes(32).toString('base64url')}`;
  return `${signedText}.${tokenMac(signedText, secret)}`;
}

export function hashToken(token: string): string {
  return createHash('sha256').update(token, 'utf8').digest('hex');
}

/**
 * The Authorization header's bearer token: the scheme `Bearer` in any letter case, one or more
 * spaces (not tabs), then the token, 1 to 512 printable ASCII characters. Nothing is trimmed: HTTP
 * already strips the whitespace around a field value (RFC 9110 5.5), so whitespace left at either
 * end is refused, and every spelling accepted maps to one key under the edge firewall's
 * COMPRESS_WHITE_SPACE then LOWERCASE (test/unit/bearer-header.test.ts). The edge function spells
 * the same pattern.
 */
export const bearerPattern = /^[Bb][Ee][Aa][Rr][Ee][Rr] +([\x21-\x7e]{1,512})$/;

/** The token of an Authorization header, or undefined when it holds none (`bearerPattern`). */
export function bearerToken(authorization: string | undefined): string | undefined {
  return authorization === undefined ? undefined : bearerPattern.exec(authorization)?.[1];
}

/**
 * Whether tokens of the unsigned form are still looked up (UNSIGNED_TOKENS: `accept`, the default,
 * or `refuse`). Tokens issued before tokens were signed keep working until rotated; once none is
 * left (`npm run admin -- tokens unsigned`), `refuse` turns them away without I/O.
 */
export function unsignedTokensAccepted(setting = process.env.UNSIGNED_TOKENS): boolean {
  if (setting === undefined || setting === '' || setting === 'accept') return true;
  if (setting === 'refuse') return false;
  throw new Error(`UNSIGNED_TOKENS must be accept or refuse, not ${JSON.stringify(setting)}`);
}

/**
 * What the Authorization header allows before any lookup: no token (`missing`: 401 `Missing bearer
 * token`), a token refused without I/O (`invalid`: a signed token whose key is unknown or whose MAC
 * is wrong, or an unsigned one while they are refused), or a token to look up, with its parts when
 * signed. The edge function decides the same (test/unit/edge-function.test.ts).
 */
export type Screening = { refused: 'missing' | 'invalid' } | { token: string; signed: SignedToken | undefined };

export interface ScreeningOptions {
  acceptUnsigned: boolean;
  /** The secret text of a key id, undefined for a key the keyring does not have. */
  macKey: (keyId: string) => Promise<string | undefined>;
}

export async function screenAuthorization(
  authorization: string | undefined,
  options: ScreeningOptions = { acceptUnsigned: unsignedTokensAccepted(), macKey: tokenMacKey },
): Promise<Screening> {
  const token = bearerToken(authorization);
  if (token === undefined) return { refused: 'missing' };
  const signed = parseSignedToken(token);
  if (!signed) return options.acceptUnsigned ? { token, signed: undefined } : { refused: 'invalid' };
  const secret = await options.macKey(signed.keyId);
  return secret !== undefined && macMatches(signed, secret) ? { token, signed } : { refused: 'invalid' };
}
