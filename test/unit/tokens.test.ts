import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { newTokenWrite, revokeTokenWrite, tokenExpired } from '#functions/core/auth/token-repository.ts';
import { previousTokenGrace, tokenRotation, tokenUseView } from '#functions/core/auth/token-rotation.ts';
import { isTokenUseStamp, tokenUseDue } from '#functions/core/auth/token-use.ts';
import { requestSchemas } from '#schemas/index.ts';
import {
  parseTokenKeyring,
  rotateTokenKeyring,
  tokenKeyringJson,
  tokenKeyStore,
  tokenMacKey,
} from '#functions/core/auth/token-keys.ts';
import {
  hashToken,
  macMatches,
  newToken,
  parseSignedToken,
  screenAuthorization,
  signedTokenPattern,
  tokenMac,
  unsignedTokensAccepted,
} from '#functions/core/auth/tokens.ts';

const scratch = mkdtempSync(join(tmpdir(), 'token-keys-'));
const keyringFile = join(scratch, 'token-keys.json');
const firstSecret = 'first-key-secret-text-0123456789abcdefghijklmnopqrstuvwxyzABCDEF';

beforeAll(() => {
  process.env.TOKEN_KEYS_FILE = keyringFile;
  writeFileSync(keyringFile, JSON.stringify({ current: '1', k1: firstSecret }));
});

afterAll(() => rmSync(scratch, { recursive: true, force: true }));

describe('the signed form', () => {
  test('tokens carry their kind, key id, owner ids, 32 random bytes and a MAC over the rest', async () => {
    for (const [kind, owner, prefix, ownerText] of [
      ['client', { clientId: 7 }, 'cli', '7'],
      ['tenant', { clientId: 7, tenantId: 42 }, 'ten', '7-42'],
      ['agent', { clientId: 7, tenantId: 42, agentId: 3 }, 'agt', '7-42-3'],
    ] as const) {
      const token = await newToken(kind, owner as never);
      const [head, random, mac] = [token.split('.').slice(0, 2).join('.'), token.split('.')[2], token.split('.')[3]];
      expect(head).toBe(`${prefix}_1.${ownerText}`);
      expect(Buffer.from(random as string, 'base64url')).toHaveLength(32);
      expect(random).toHaveLength(43);
      expect(mac).toBe(tokenMac(`${head}.${random}`, firstSecret));
      expect(mac).toHaveLength(43);
      expect(token).toMatch(signedTokenPattern);
      expect(parseSignedToken(token)).toEqual({
        subject: { kind, ...owner },
        keyId: '1',
        signedText: `${head}.${random}`,
        mac,
      });
    }
    const many = new Set(await Promise.all(Array.from({ length: 200 }, () => newToken('tenant', { clientId: 1, tenantId: 2 }))));
    expect(many.size).toBe(200);
  });

  test('the MAC is HMAC-SHA256 keyed by the UTF-8 of the secret text, base64url without padding', () => {
    // RFC 4231 test case 2: key "Jefe", data "what do ya want for nothing?".
    const expected = Buffer.from('5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843', 'hex').toString('base64url');
    expect(tokenMac('what do ya want for nothing?', 'Jefe')).toBe(expected);
    expect(expected).not.toContain('=');
  });

  test('the owner part must have as many ids as the kind, each positive without leading zeros, at most 15 digits', () => {
    const random = 'A'.repeat(43);
    const mac = 'B'.repeat(43);
    const parsed = (head: string) => parseSignedToken(`${head}.${random}.${mac}`) !== undefined;
    expect(parsed('cli_1.5')).toBe(true);
    expect(parsed('ten_1.5-6')).toBe(true);
    expect(parsed('agt_1.5-6-7')).toBe(true);
    expect(parsed('agt_999999.999999999999999-1-1')).toBe(true);
    for (const head of [
      'cli_1.5-6',
      'ten_1.5',
      'ten_1.5-6-7',
      'agt_1.5-6',
      'cli_1.05',
      'cli_1.0',
      'cli_01.5',
      'cli_0.5',
      'cli_1234567.5',
      'cli_1.1234567890123456',
      'cli_1.-5',
      'cli_1.5-',
      'xyz_1.5',
      'CLI_1.5',
      'cli_1..5',
    ]) {
      expect(parsed(head), head).toBe(false);
    }
    expect(parseSignedToken(`cli_1.5.${random}.${mac.slice(1)}`)).toBeUndefined();
    expect(parseSignedToken(`cli_1.5.${random}=.${mac}`)).toBeUndefined();
    expect(parseSignedToken(`cli_1.5.${random}.${mac} `)).toBeUndefined();
  });

  test('a MAC altered in one character, or made with another key, does not match', async () => {
    const token = await newToken('client', { clientId: 9 });
    const signed = parseSignedToken(token);
    if (!signed) throw new Error('not signed');
    expect(macMatches(signed, firstSecret)).toBe(true);
    expect(macMatches(signed, `${firstSecret}x`)).toBe(false);
    const last = signed.mac.at(-1) === 'A' ? 'B' : 'A';
    expect(macMatches({ ...signed, mac: `${signed.mac.slice(0, -1)}${last}` }, firstSecret)).toBe(false);
    // Another owner under the same MAC: the MAC covers the owner.
    expect(macMatches({ ...signed, signedText: signed.signedText.replace('cli_1.9.', 'cli_1.8.') }, firstSecret)).toBe(false);
  });

  test('the stored form is the SHA-256 hex digest, never the token', () => {
    // FIPS 180-2 test vector for "abc".
    expect(hashToken('abc')).toBe('ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad');
    expect(hashToken('ten_abc')).not.toContain('abc');
    expect(hashToken('ten_abc')).not.toBe(hashToken('ten_abd'));
  });
});

describe('token items', () => {
  test('a signed token records signed and its key id; an unsigned one neither', async () => {
    const signed = newTokenWrite(await newToken('tenant', { clientId: 3, tenantId: 4 }), {
      kind: 'tenant',
      clientId: 3,
      tenantId: 4,
    });
    expect(signed.Put.Item).toMatchObject({ kind: 'tenant', clientId: 3, tenantId: 4, keyId: 1 });
    const unsigned = newTokenWrite('cli_local_demo_token_0123456789', { kind: 'client', clientId: 3 });
    expect(unsigned.Put.Item).not.toHaveProperty('keyId');
    expect(unsigned.Put.Item).not.toHaveProperty('keyId');
  });

  test('an item past its expiresAt (epoch seconds) is no token; one without an expiry never expires', () => {
    expect(tokenExpired({ expiresAt: 100 }, 100_000)).toBe(true);
    expect(tokenExpired({ expiresAt: 101 }, 100_999)).toBe(false);
    expect(tokenExpired({}, Number.MAX_SAFE_INTEGER)).toBe(false);
  });

  test('a token signed for one owner is never stored for another', async () => {
    const token = await newToken('agent', { clientId: 3, tenantId: 4, agentId: 5 });
    expect(() => newTokenWrite(token, { kind: 'agent', clientId: 3, tenantId: 4, agentId: 6 })).toThrow(/signed for/);
    expect(() => newTokenWrite(token, { kind: 'tenant', clientId: 3, tenantId: 4 })).toThrow(/signed for/);
  });
});

describe('rotations and their previous token', () => {
  const [current, previous, dead] = ['a', 'b', 'c'].map((letter) => letter.repeat(64)) as [string, string, string];
  const owner = {
    tokenHash: current,
    previousTokenHash: previous,
    previousTokenExpiresAt: new Date(2_000_000).toISOString(),
    tokensLastUsedAt: { [current]: 'used current', [previous]: 'used previous', [dead]: 'used long ago' },
  };
  const nowMs = 1_000_000;

  test('keeps the replaced token until the grace period ends, ends the one an earlier rotation kept, keeps only live uses', async () => {
    const token = await newToken('client', { clientId: 3 });
    const kept = tokenRotation(owner, token, { kind: 'client', clientId: 3 }, undefined, nowMs);
    const expiresAt = nowMs / 1000 + previousTokenGrace.defaultSeconds;
    expect(kept.previousExpiresAt).toBe(new Date(expiresAt * 1000).toISOString());
    expect(kept.replacedToken.Update).toMatchObject({ ExpressionAttributeValues: { ':expiresAt': expiresAt } });
    expect(kept.endedTokens).toEqual([revokeTokenWrite(previous)]);
    expect(kept.ownerUpdate(['updatedAt = :now'])).toBe(
      'SET updatedAt = :now, tokenHash = :newTokenHash, tokensLastUsedAt = :tokensLastUsedAt, ' +
        'previousTokenHash = :previousTokenHash, previousTokenExpiresAt = :previousTokenExpiresAt',
    );
    expect(kept.ownerValues).toEqual({
      ':newTokenHash': hashToken(token),
      ':tokensLastUsedAt': { [current]: 'used current' },
      ':previousTokenHash': current,
      ':previousTokenExpiresAt': kept.previousExpiresAt,
    });
  });

  test('with no grace period, the replaced token and the previous one both stop', async () => {
    const token = await newToken('client', { clientId: 3 });
    const cut = tokenRotation(owner, token, { kind: 'client', clientId: 3 }, 0, nowMs);
    expect(cut.previousExpiresAt).toBeNull();
    expect(cut.replacedToken).toEqual(revokeTokenWrite(current));
    expect(cut.endedTokens).toEqual([revokeTokenWrite(previous)]);
    expect(cut.ownerUpdate()).toBe(
      'SET tokenHash = :newTokenHash, tokensLastUsedAt = :tokensLastUsedAt REMOVE previousTokenHash, previousTokenExpiresAt',
    );
    expect(cut.ownerValues[':tokensLastUsedAt']).toEqual({});
    expect(() => tokenRotation(owner, token, { kind: 'client', clientId: 3 }, previousTokenGrace.maxSeconds + 1)).toThrow();
  });

  test("the grace period's default and bound are the request schema's", () => {
    const { previousValidForSeconds } = requestSchemas['rotate-token'].properties;
    expect(previousValidForSeconds).toMatchObject({
      minimum: 0,
      maximum: previousTokenGrace.maxSeconds,
      default: previousTokenGrace.defaultSeconds,
    });
  });

  test("an owner's tokens' uses show the previous token only while it works", () => {
    expect(tokenUseView(owner, nowMs)).toEqual({
      currentToken: { lastUsedAt: 'used current' },
      previousToken: { expiresAt: owner.previousTokenExpiresAt, lastUsedAt: 'used previous' },
    });
    expect(tokenUseView(owner, 2_000_000).previousToken).toBeNull();
    expect(tokenUseView({ tokenHash: current }, nowMs)).toEqual({ currentToken: { lastUsedAt: null }, previousToken: null });
  });

  test("a token's use is due a stamp when never stamped or last stamped a minute ago or more", () => {
    const at = (ms: number) => new Date(ms).toISOString();
    expect(tokenUseDue({}, nowMs)).toBe(true);
    expect(tokenUseDue({ lastUsedAt: at(nowMs - 59_999) }, nowMs)).toBe(false);
    expect(tokenUseDue({ lastUsedAt: at(nowMs - 60_001) }, nowMs)).toBe(true);
    expect(isTokenUseStamp({ UpdateExpression: 'SET lastUsedAt = :at' })).toBe(true);
    expect(isTokenUseStamp({ UpdateExpression: 'SET tokenHash = :newTokenHash' })).toBe(false);
    expect(isTokenUseStamp(undefined)).toBe(false);
  });
});

describe('screening before any lookup', () => {
  const keys = new Map([['1', firstSecret]]);
  const options = (acceptUnsigned: boolean) => ({ acceptUnsigned, macKey: async (keyId: string) => keys.get(keyId) });

  test('a valid signed token goes to the lookup; a forged one, an unknown key and no token do not', async () => {
    const token = await newToken('client', { clientId: 11 });
    expect(await screenAuthorization(`Bearer ${token}`, options(false))).toEqual({ token, signed: parseSignedToken(token) });
    expect(await screenAuthorization(`Bearer ${token.slice(0, -1)}${token.endsWith('A') ? 'B' : 'A'}`, options(true))).toEqual({
      refused: 'invalid',
    });
    expect(await screenAuthorization(`Bearer ${token.replace('cli_1.', 'cli_2.')}`, options(true))).toEqual({
      refused: 'invalid',
    });
    expect(await screenAuthorization(undefined, options(true))).toEqual({ refused: 'missing' });
    expect(await screenAuthorization('Basic abc', options(true))).toEqual({ refused: 'missing' });
  });

  test('unsigned tokens go to the lookup while accepted (the default), are refused with UNSIGNED_TOKENS=refuse', async () => {
    const header = 'Bearer cli_local_demo_token_0123456789';
    expect(await screenAuthorization(header, options(true))).toEqual({
      token: 'cli_local_demo_token_0123456789',
      signed: undefined,
    });
    expect(await screenAuthorization(header, options(false))).toEqual({ refused: 'invalid' });
    expect(unsignedTokensAccepted(undefined)).toBe(true);
    expect(unsignedTokensAccepted('accept')).toBe(true);
    expect(unsignedTokensAccepted('refuse')).toBe(false);
    expect(() => unsignedTokensAccepted('no')).toThrow(/accept or refuse/);
  });
});

describe('the token keyring', () => {
  test('is flat JSON: current names the key that mints, every k<id> verifies; other entries are ignored', () => {
    const keyring = parseTokenKeyring({ current: '2', k1: 'one', k2: 'two', k03: 'leading zero', kx: 'x', k4: '', other: 'y' });
    expect(keyring).toEqual({ current: '2', keys: { '1': 'one', '2': 'two' } });
    expect(tokenKeyringJson(keyring)).toEqual({ current: '2', k1: 'one', k2: 'two' });
    expect(parseTokenKeyring(undefined)).toEqual({ current: undefined, keys: {} });
    expect(parseTokenKeyring(['k1'])).toEqual({ current: undefined, keys: {} });
  });

  test('a rotation adds k<n+1> and makes it current; the file stays mode 600', async () => {
    const file = join(scratch, 'rotated-token-keys.json');
    const previous = process.env.TOKEN_KEYS_FILE;
    process.env.TOKEN_KEYS_FILE = file;
    try {
      const store = tokenKeyStore();
      const first = rotateTokenKeyring(await store.read());
      expect(first.keyId).toBe('1');
      await store.write(first.keyring);
      const second = rotateTokenKeyring(await store.read());
      expect(second.keyId).toBe('2');
      await store.write(second.keyring);
      const stored = JSON.parse(readFileSync(file, 'utf8')) as Record<string, string>;
      expect(Object.keys(stored)).toEqual(['current', 'k1', 'k2']);
      expect(stored.current).toBe('2');
      expect(stored.k1).toMatch(/^[A-Za-z0-9_-]{64}$/);
      expect(stored.k2).not.toBe(stored.k1);
      expect(statSync(file).mode & 0o777).toBe(0o600);
    } finally {
      process.env.TOKEN_KEYS_FILE = previous;
    }
  });

  test('a key rotated in after the keyring was cached verifies at once (an unknown id re-reads the keyring)', async () => {
    await newToken('client', { clientId: 1 }); // The keyring is cached now.
    writeFileSync(keyringFile, JSON.stringify({ current: '2', k1: firstSecret, k2: 'second-secret' }));
    expect(await tokenMacKey('2')).toBe('second-secret');
    expect(await tokenMacKey('3')).toBeUndefined();
  });
});
