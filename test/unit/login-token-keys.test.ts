/**
 * Unknown `kid`s: a login token naming a key the function has not cached makes it re-read the
 * keyring (on AWS, a Secrets Manager call), since that key may have been rotated in. Made-up kids
 * must not turn that into a remote call per request.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import type * as FileSystem from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { importJWK, SignJWT } from 'jose';
import { afterAll, beforeAll, expect, test, vi } from 'vitest';
import { verifyLoginToken } from '#functions/core/sso/login-tokens.ts';
import { type Keyring, newSigningKey, rotateKeyring, type SigningKey } from '#functions/core/sso/signing-keys.ts';

const keyringReads = vi.hoisted(() => ({ count: 0 }));
vi.mock('node:fs/promises', async (importOriginal) => {
  const actual = await importOriginal<typeof FileSystem>();
  const readFile: typeof actual.readFile = (async (...args: Parameters<typeof actual.readFile>) => {
    keyringReads.count++;
    return actual.readFile(...args);
  }) as typeof actual.readFile;
  return { ...actual, readFile };
});

const host = 'acme-1.localhost';
const scratch = mkdtempSync(join(tmpdir(), 'keyring-'));
const keyringFile = join(scratch, 'signing-keys.json');
const writeKeyring = (keyring: Keyring) => writeFileSync(keyringFile, JSON.stringify(keyring));
let clock = Date.parse('2026-11-22T10:00:00Z');
const advance = (ms: number) => {
  clock += ms;
  vi.setSystemTime(clock);
};

/** A token as the service signs them, signed by `key` and naming `kid`. */
async function tokenSignedBy(key: SigningKey, kid = key.kid): Promise<string> {
  const issuedAt = Math.floor(clock / 1000);
  return new SignJWT({ login: 'ana@acme.com', tid: 1 })
    .setProtectedHeader({ alg: 'ES256', kid, typ: 'JWT' })
    .setIssuer('bi-tenant-admin')
    .setAudience(host)
    .setSubject('1')
    .setIssuedAt(issuedAt)
    .setExpirationTime(issuedAt + 3600)
    .setJti(crypto.randomUUID())
    .sign(await importJWK(key.privateJwk, 'ES256'));
}

const outcome = (token: string) =>
  verifyLoginToken(token, host, clock).then(
    () => 'valid',
    (error: { problem?: string }) => error.problem ?? 'error',
  );

let current: SigningKey;
let stranger: SigningKey;
beforeAll(async () => {
  vi.useFakeTimers({ toFake: ['Date'] });
  vi.setSystemTime(clock);
  process.env.SIGNING_KEYS_FILE = keyringFile;
  [current, stranger] = await Promise.all([newSigningKey(), newSigningKey()]);
  writeKeyring({ keys: [current] });
});
afterAll(() => {
  vi.useRealTimers();
  rmSync(scratch, { recursive: true, force: true });
});

test('a flood of tokens with made-up kids reads the keyring at most once per few seconds', async () => {
  expect(await outcome(await tokenSignedBy(current))).toBe('valid');
  for (let window = 0; window < 3; window++) {
    const before = keyringReads.count;
    for (let index = 0; index < 200; index++) {
      expect(await outcome(await tokenSignedBy(stranger, crypto.randomUUID()))).toBe('invalid');
    }
    expect(keyringReads.count - before, `window ${window}`).toBeLessThanOrEqual(1);
    advance(5_000);
  }
  // Valid tokens keep verifying throughout, from the cached keyring.
  expect(await outcome(await tokenSignedBy(current))).toBe('valid');
});

test('a kid a fresh read did not have costs no read when it comes back within the minute', async () => {
  advance(10_000);
  const kid = crypto.randomUUID();
  expect(await outcome(await tokenSignedBy(stranger, kid))).toBe('invalid');
  const before = keyringReads.count;
  for (let second = 0; second < 50; second++) {
    advance(1_000);
    expect(await outcome(await tokenSignedBy(stranger, kid))).toBe('invalid');
  }
  expect(keyringReads.count - before).toBe(0);
});

test('a key rotated in since the keyring was cached verifies at once, and still does during a flood', async () => {
  advance(10_000);
  const rotated = await newSigningKey(new Date(clock));
  writeKeyring(rotateKeyring({ keys: [current] }, rotated, new Date(clock)));
  expect(await outcome(await tokenSignedBy(rotated))).toBe('valid');
  expect(await outcome(await tokenSignedBy(current))).toBe('valid');

  // A flood has just spent the re-read; the next rotation is met within the same few seconds.
  advance(10_000);
  expect(await outcome(await tokenSignedBy(stranger, crypto.randomUUID()))).toBe('invalid');
  const next = await newSigningKey(new Date(clock));
  writeKeyring(rotateKeyring({ keys: [rotated, current] }, next, new Date(clock)));
  advance(1_000);
  const token = await tokenSignedBy(next);
  // Refused while the flood's read is this recent, not remembered as unknown for it…
  expect(await outcome(token)).toBe('invalid');
  // …and valid a few seconds later.
  advance(5_000);
  expect(await outcome(token)).toBe('valid');
});

test('the memory of an unknown kid lasts a minute', async () => {
  advance(10_000);
  const kid = crypto.randomUUID();
  const token = await tokenSignedBy(stranger, kid);
  expect(await outcome(token)).toBe('invalid');
  // The stranger key is added under that kid: a minute later the kid is read for again, and found.
  writeKeyring({ keys: [{ ...stranger, kid }, current] });
  advance(30_000);
  expect(await outcome(token)).toBe('invalid');
  advance(31_000);
  expect(await outcome(token)).toBe('valid');
});
