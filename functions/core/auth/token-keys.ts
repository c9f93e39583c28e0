import { randomBytes } from 'node:crypto';
import { type JsonSecretStore, jsonSecretStore } from '#functions/core/keyrings/json-secret.ts';
import { KeyringCache } from '#functions/core/keyrings/keyring-cache.ts';

/**
 * The token keyring: the HMAC keys that sign bearer tokens (tokens.ts). Kept as one flat JSON
 * object, `{"current":"1","k1":"<secret text>","k2":"…"}`: `current` names the key that mints,
 * every `k<id>` verifies. A key is the UTF-8 of its secret text, so that CloudFormation can make
 * the first one (a generated secret string) and the edge function can use the text as it stores it.
 */
export interface TokenKeyring {
  /** The id of the key new tokens are signed with; undefined in an empty keyring. */
  current: string | undefined;
  /** Key id → secret text. */
  keys: Record<string, string>;
}

/** A key id: a decimal without leading zeros, at most six digits (tokens name it; tokens.ts). */
export const tokenKeyIdPattern = /^[1-9][0-9]{0,5}$/;

/** Where the keyring lives: the stack's secret on AWS (TOKEN_KEYS_SECRET_ARN), a file of the twin's (TOKEN_KEYS_FILE). */
export const tokenKeysLocation = { secretArnVariable: 'TOKEN_KEYS_SECRET_ARN', fileVariable: 'TOKEN_KEYS_FILE' } as const;

/** The keyring of a JSON document; entries that are not `current` or `k<id>` with a non-empty text are ignored. */
export function parseTokenKeyring(json: unknown): TokenKeyring {
  const keys: Record<string, string> = {};
  let current: string | undefined;
  if (json !== null && typeof json === 'object' && !Array.isArray(json)) {
    for (const [name, value] of Object.entries(json)) {
      if (typeof value !== 'string') continue;
      if (name === 'current') current = value;
      else if (name.startsWith('k') && tokenKeyIdPattern.test(name.slice(1)) && value.length > 0) keys[name.slice(1)] = value;
    }
  }
  return { current, keys };
}

/** The name a key has in the JSON document and in the edge's KeyValueStore: `k<id>`. */
export const tokenKeyName = (id: string) => `k${id}`;

/** The JSON document of a keyring, as the secret and the file hold it. */
export function tokenKeyringJson(keyring: TokenKeyring): Record<string, string> {
  const ids = Object.keys(keyring.keys).sort((a, b) => Number(a) - Number(b));
  return {
    ...(keyring.current === undefined ? {} : { current: keyring.current }),
    ...Object.fromEntries(ids.map((id) => [tokenKeyName(id), keyring.keys[id] as string])),
  };
}

export function tokenKeyStore(): JsonSecretStore<TokenKeyring> {
  return jsonSecretStore(tokenKeysLocation, { parse: parseTokenKeyring, serialize: tokenKeyringJson });
}

/** A new key's secret text: 64 characters of base64url (384 random bits), as long as the stack's generated first key. */
export const newTokenKeySecret = (): string => randomBytes(48).toString('base64url');

/** The keyring with one key more, `k<highest id + 1>`, which becomes current; the others keep verifying. */
export function rotateTokenKeyring(
  keyring: TokenKeyring,
  secret = newTokenKeySecret(),
): { keyring: TokenKeyring; keyId: string } {
  const keyId = String(Math.max(0, ...Object.keys(keyring.keys).map(Number)) + 1);
  if (!tokenKeyIdPattern.test(keyId)) throw new Error(`No token key id left after ${Number(keyId) - 1}`);
  return { keyring: { current: keyId, keys: { ...keyring.keys, [keyId]: secret } }, keyId };
}

/** The functions' copy of the keyring: cached 5 minutes, read again early for an unknown key id (keyrings/keyring-cache.ts). */
const cache = new KeyringCache(() => tokenKeyStore().read(), 6);

/** The keyring, cached for a few minutes per cold start; `refresh` forces a read. */
export function currentTokenKeyring(options: { refresh?: boolean } = {}): Promise<TokenKeyring> {
  return cache.current(options);
}

/**
 * The secret text of key `keyId`, to verify a token's MAC; undefined for a key the keyring does not
 * have, even after the rate-limited re-read that a key rotated in since the cache was filled needs.
 */
export function tokenMacKey(keyId: string): Promise<string | undefined> {
  return cache.find(keyId, (keyring) => (Object.hasOwn(keyring.keys, keyId) ? keyring.keys[keyId] : undefined));
}

/** The key that mints: the current one. Its absence is a deployment fault (the stack and the twin make the first key). */
export async function mintingKey(): Promise<{ keyId: string; secret: string }> {
  const keyring = await currentTokenKeyring();
  const secret = keyring.current === undefined ? undefined : keyring.keys[keyring.current];
  if (keyring.current === undefined || secret === undefined) {
    throw new Error(
      `No current token key: the token keyring (${tokenKeysLocation.secretArnVariable} or ${tokenKeysLocation.fileVariable}) ` +
        'must name in `current` one of its k<id> keys (operators: npm run admin -- token-keys rotate)',
    );
  }
  return { keyId: keyring.current, secret };
}
