import { expect, test } from 'vitest';
import { claimedOwner, hashToken, newToken, type TokenOwner } from '../../functions/core/auth/tokens.ts';

const owners: Array<[TokenOwner, string]> = [
  [{ kind: 'client', clientId: 7 }, 'cli_7.'],
  [{ kind: 'tenant', clientId: 7, tenantId: 42 }, 'ten_7.42.'],
  [{ kind: 'agent', clientId: 7, tenantId: 42, agentId: 3 }, 'agt_7.42.3.'],
];

test("tokens carry their kind as a prefix, their owner's ids and 32 random bytes", () => {
  for (const [owner, start] of owners) {
    const token = newToken(owner);
    expect(token.startsWith(start)).toBe(true);
    expect(Buffer.from(token.slice(start.length), 'base64url')).toHaveLength(32);
    expect(claimedOwner(token)).toEqual(owner);
  }
  const many = new Set(Array.from({ length: 1000 }, () => newToken({ kind: 'tenant', clientId: 1, tenantId: 1 })));
  expect(many.size).toBe(1000);
});

test('a token claims an owner only in exactly the shape newToken writes', () => {
  const secret = 'A'.repeat(43);
  for (const token of [
    `ten_${secret}`, // made before tokens carried ids
    `cli_${'B'.repeat(43)}`,
    `ten_7.${secret}`, // a tenant token needs two ids
    `cli_7.42.${secret}`, // a client token has one
    `agt_7.42.${secret}`,
    `ten_0.42.${secret}`, // ids start at 1
    `ten_07.42.${secret}`,
    `ten_7.42.${secret}A`, // the secret is exactly 43 characters
    `ten_7.42.${secret.slice(1)}`,
    `ten_7.42.${secret.slice(1)}=`,
    `xyz_7.42.${secret}`,
    `ten_7.9999999999999999.${secret}`, // past the safe integers
    ` ten_7.42.${secret}`,
    '',
  ]) {
    expect(claimedOwner(token), token).toBeUndefined();
  }
  expect(claimedOwner(`ten_9007199254740991.1.${secret}`)).toEqual({ kind: 'tenant', clientId: 9007199254740991, tenantId: 1 });
});

test('the stored form is the SHA-256 hex digest, never the token', () => {
  // FIPS 180-2 test vector for "abc".
  expect(hashToken('abc')).toBe('ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad');
  expect(hashToken('ten_abc')).not.toContain('abc');
  expect(hashToken('ten_abc')).not.toBe(hashToken('ten_abd'));
});
