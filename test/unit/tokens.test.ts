import { expect, test } from 'vitest';
import { hashToken, newToken } from '#functions/core/auth/tokens.ts';

test('tokens carry their kind as a prefix and 32 random bytes', () => {
  for (const [kind, prefix] of [
    ['client', 'cli_'],
    ['tenant', 'ten_'],
    ['agent', 'agt_'],
  ] as const) {
    const token = newToken(kind);
    expect(token.startsWith(prefix)).toBe(true);
    expect(Buffer.from(token.slice(4), 'base64url')).toHaveLength(32);
  }
  const many = new Set(Array.from({ length: 1000 }, () => newToken('tenant')));
  expect(many.size).toBe(1000);
});

test('the stored form is the SHA-256 hex digest, never the token', () => {
  // FIPS 180-2 test vector for "abc".
  expect(hashToken('abc')).toBe('ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad');
  expect(hashToken('ten_abc')).not.toContain('abc');
  expect(hashToken('ten_abc')).not.toBe(hashToken('ten_abd'));
});
