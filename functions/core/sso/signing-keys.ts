import { randomUUID } from 'node:crypto';
import { readFile, writeFile } from 'node:fs/promises';
import { GetSecretValueCommand, PutSecretValueCommand, SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import { exportJWK, generateKeyPair, type JWK } from 'jose';
import { ServiceError } from '#functions/core/errors.ts';

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
/** Functions re-read the keyring this often, and sooner when they meet an unknown `kid` (see `verificationKey`). */
const keyringCacheMs = 5 * 60 * 1000;
/** A kid that a fresh read of the keyring did not have is refused without reading it again for this long. */
const unknownKidMemoryMs = 60 * 1000;
/** At most this many such kids are remembered (the oldest are forgotten first). */
const maxRememberedUnknownKids = 1000;
/** Whatever the kids, an unknown one makes the function re-read the keyring at most this often. */
const minKeyringRereadMs = 5 * 1000;
/** Our kids are UUIDs: a longer one is none of ours, and is neither read for nor remembered. */
const maxKidLength = 64;

/**
 * Where the keyring lives: a Secrets Manager secret on AWS (SIGNING_KEYS_SECRET_ARN, created by
 * the stack, filled by `npm run admin -- keys rotate`), a file on the local twin (SIGNING_KEYS_FILE).
 */
export interface KeyringStore {
  read(): Promise<Keyring>;
  write(keyring: Keyring): Promise<void>;
}

let secretsClient: SecretsManagerClient | undefined;

export function keyringStore(): KeyringStore {
  const secretArn = process.env.SIGNING_KEYS_SECRET_ARN;
  if (secretArn) {
    secretsClient ??= new SecretsManagerClient({});
    const client = secretsClient;
    return {
      read: async () => parseKeyring((await client.send(new GetSecretValueCommand({ SecretId: secretArn }))).SecretString),
      write: async (keyring) => {
        await client.send(new PutSecretValueCommand({ SecretId: secretArn, SecretString: JSON.stringify(keyring) }));
      },
    };
  }
  const file = process.env.SIGNING_KEYS_FILE;
  if (!file) throw new Error('Missing SIGNING_KEYS_SECRET_ARN (AWS) or SIGNING_KEYS_FILE (local twin)');
  return {
    read: async () => parseKeyring(await readFile(file, 'utf8').catch(() => undefined)),
    write: (keyring) => writeFile(file, `${JSON.stringify(keyring, null, 2)}\n`, { mode: 0o600 }),
  };
}

function parseKeyring(text: string | undefined): Keyring {
  if (!text) return { keys: [] };
  const parsed = JSON.parse(text) as Partial<Keyring>;
  return { keys: Array.isArray(parsed.keys) ? parsed.keys : [] };
}

let cached: { keyring: Keyring; loadedAt: number } | undefined;

/** The keyring, cached for a few minutes per cold start; `refresh` forces a read (an unknown kid). */
export async function currentKeyring(options: { refresh?: boolean } = {}): Promise<Keyring> {
  if (!cached || options.refresh || Date.now() - cached.loadedAt > keyringCacheMs) {
    cached = { keyring: await keyringStore().read(), loadedAt: Date.now() };
  }
  return cached.keyring;
}

/** Unknown kid → until when (epoch ms) it is refused without a read. Insertion order is age order. */
const unknownKids = new Map<string, number>();
let lastReread = Number.NEGATIVE_INFINITY;

/**
 * The published key a token names by `kid`, valid for tokens at `at` (epoch ms). A kid missing from
 * the cached keyring may be a key rotated in since, so the keyring is read again (on AWS a
 * Secrets Manager call), but not for anyone who sends made-up kids: a kid that a fresh read did
 * not have is refused without another read for a minute, and however many different kids arrive,
 * the keyring is re-read at most once per `minKeyringRereadMs`. A token signed by a key rotated in
 * during such a pause is refused until it ends (a few seconds).
 */
export async function verificationKey(kid: string | undefined, at = Date.now()): Promise<SigningKey | undefined> {
  const find = (keyring: Keyring) => publishedKeys(keyring, at).find((key) => key.kid === kid);
  const known = find(await currentKeyring());
  if (known || kid === undefined || kid.length > maxKidLength) return known;
  const now = Date.now();
  if ((unknownKids.get(kid) ?? 0) > now || now - lastReread < minKeyringRereadMs) return undefined;
  lastReread = now;
  const reread = find(await currentKeyring({ refresh: true }));
  if (!reread) rememberUnknownKid(kid, now);
  return reread;
}

function rememberUnknownKid(kid: string, now: number): void {
  unknownKids.delete(kid);
  unknownKids.set(kid, now + unknownKidMemoryMs);
  for (const [oldest, until] of unknownKids) {
    if (unknownKids.size <= maxRememberedUnknownKids && until > now) break;
    unknownKids.delete(oldest);
  }
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
