import { randomUUID } from 'node:crypto';
import { exportJWK, generateKeyPair, type JWK } from 'jose';
import { ServiceError } from '#functions/core/errors.ts';
import { type JsonSecretStore, jsonSecretStore } from '#functions/core/keyrings/json-secret.ts';
import { KeyringCache } from '#functions/core/keyrings/keyring-cache.ts';

/** One ES256 key pair of the keyring; the newest key that is not retired signs. */
export interface SigningKey {
  kid: string;
  privateJwk: JWK;
  publicJwk: JWK;
  createdAt: string;
  retiredAt?: string;
}

export interface Keyring {
  keys: SigningKey[];
}

export const loginTokenLifetimeSeconds = 3600;
/** A retired key is published (and verifies) until every token it signed has expired, plus clock skew. */
const retiredKeyGraceMs = (loginTokenLifetimeSeconds + 300) * 1000;
/** Our kids are UUIDs: a longer one is none of ours, and is neither read for nor remembered. */
const maxKidLength = 64;

/**
 * Where the keyring lives: a Secrets Manager secret on AWS (SIGNING_KEYS_SECRET_ARN, created by
 * the stack, its first key put in at deploy, rotated by `npm run admin -- keys rotate`), a file on
 * the local twin (SIGNING_KEYS_FILE).
 */
export type KeyringStore = JsonSecretStore<Keyring>;

export function keyringStore(): KeyringStore {
  return jsonSecretStore(
    { secretArnVariable: 'SIGNING_KEYS_SECRET_ARN', fileVariable: 'SIGNING_KEYS_FILE' },
    { parse: parseKeyring, serialize: (keyring) => keyring },
  );
}

function parseKeyring(json: unknown): Keyring {
  const keys = (json as Partial<Keyring> | undefined)?.keys;
  return { keys: Array.isArray(keys) ? keys : [] };
}

/** The functions' copy of the keyring (keyrings/keyring-cache.ts: 5 minutes, early re-reads for unknown kids). */
const cache = new KeyringCache(() => keyringStore().read(), maxKidLength);

/** The keyring, cached for a few minutes per cold start; `refresh` forces a read (an unknown kid). */
export function currentKeyring(options: { refresh?: boolean } = {}): Promise<Keyring> {
  return cache.current(options);
}

/**
 * The published key a token names by `kid`, valid for tokens at `at` (epoch ms). A kid missing from
 * the cached keyring may be a key rotated in since, so the keyring is read again, within the limits
 * of `KeyringCache.find`: made-up kids do not turn into a Secrets Manager call per request.
 */
export function verificationKey(kid: string | undefined, at = Date.now()): Promise<SigningKey | undefined> {
  return cache.find(kid, (keyring) => publishedKeys(keyring, at).find((key) => key.kid === kid));
}

export async function activeSigningKey(): Promise<SigningKey> {
  const key = (await currentKeyring()).keys.find((candidate) => candidate.retiredAt === undefined);
  if (!key) {
    throw new ServiceError(
      503,
      'no_signing_key',
      'Login tokens cannot be issued: no signing key yet (operators: npm run admin -- keys rotate)',
    );
  }
  return key;
}

/** The keys whose tokens may still be valid: the active one and those retired less than a token lifetime ago. */
export function publishedKeys(keyring: Keyring, now = Date.now()): SigningKey[] {
  return keyring.keys.filter((key) => key.retiredAt === undefined || now - Date.parse(key.retiredAt) < retiredKeyGraceMs);
}

/** The JWKS document of GET /.well-known/jwks.json. */
export const jwksOf = (keyring: Keyring, now = Date.now()) => ({
  keys: publishedKeys(keyring, now).map((key) => ({ ...key.publicJwk, kid: key.kid, alg: 'ES256', use: 'sig' })),
});

export async function newSigningKey(now = new Date()): Promise<SigningKey> {
  const { publicKey, privateKey } = await generateKeyPair('ES256', { extractable: true });
  return {
    kid: randomUUID(),
    privateJwk: await exportJWK(privateKey),
    publicJwk: await exportJWK(publicKey),
    createdAt: now.toISOString(),
  };
}

/** A new active key; the previous ones retire now and are dropped once no token they signed can be valid. */
export function rotateKeyring(keyring: Keyring, key: SigningKey, now = new Date()): Keyring {
  const retired = keyring.keys.map((old) => ({ ...old, retiredAt: old.retiredAt ?? now.toISOString() }));
  return { keys: [key, ...publishedKeys({ keys: retired }, now.getTime())] };
}

/**
 * Makes a key as `keys rotate` does (bin/admin.ts) when the keyring has no active one, and nothing
 * when it has: the deploy's custom resource (functions/deploy/first-signing-key.ts) and the twin's
 * start call it, as often as they like. The new key's id (public: the JWKS lists it), if one was made.
 */
export async function ensureSigningKey(store: KeyringStore = keyringStore()): Promise<string | undefined> {
  const keyring = await store.read();
  if (keyring.keys.some((key) => key.retiredAt === undefined)) return undefined;
  const key = await newSigningKey();
  await store.write(rotateKeyring(keyring, key));
  return key.kid;
}
