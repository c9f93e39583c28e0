import { randomBytes } from 'node:crypto';
import { Webhook } from 'standardwebhooks';
import { describe, expect, test } from 'vitest';
import { retryAfterSeconds } from '#functions/core/alerts/deliverer.ts';
import { signatureHeader } from '#functions/core/alerts/settings.ts';

const newSecret = () => `whsec_${randomBytes(32).toString('base64')}`;
const body = JSON.stringify({ alert: { nome: 'A', id: 1 }, user: { id: 2 }, content: [], timestamp: '2026-11-22T10:00:00.000Z' });
// The package refuses timestamps more than 5 minutes from its clock: sign with the real one.
const now = Date.now();
const timestamp = Math.floor(now / 1000);

/** What a receiver does: the standardwebhooks package's own verification. */
function verifies(secret: string, signature: string): boolean {
  const headers = { 'webhook-id': 'msg_1', 'webhook-timestamp': String(timestamp), 'webhook-signature': signature };
  try {
    new Webhook(secret).verify(body, headers);
    return true;
  } catch {
    return false;
  }
}

describe('webhook signatures (Standard Webhooks)', () => {
  test('a v1 signature that the standardwebhooks package verifies, and another secret does not', () => {
    const secret = newSecret();
    const header = signatureHeader([{ secret, createdAt: '' }], 'msg_1', timestamp, body, now);
    expect(header).toMatch(/^v1,[A-Za-z0-9+/]{43}=$/);
    expect(verifies(secret, header)).toBe(true);
    expect(verifies(newSecret(), header)).toBe(false);
  });

  test('during a rotation both secrets sign; a retired one no longer does', () => {
    const [fresh, old, retired] = [newSecret(), newSecret(), newSecret()];
    const header = signatureHeader(
      [
        { secret: fresh, createdAt: '' },
        { secret: old, createdAt: '', retiresAt: new Date(now + 3600_000).toISOString() },
        { secret: retired, createdAt: '', retiresAt: new Date(now - 1).toISOString() },
      ],
      'msg_1',
      timestamp,
      body,
      now,
    );
    expect(header.split(' ')).toHaveLength(2);
    expect(verifies(fresh, header)).toBe(true);
    expect(verifies(old, header)).toBe(true);
    expect(verifies(retired, header)).toBe(false);
  });
});

describe('Retry-After', () => {
  const at = Date.parse('2026-11-22T10:00:00Z');
  test.each([
    ['120', 120],
    [' 7 ', 7],
    ['Sun, 22 Nov 2026 10:01:00 GMT', 60],
    ['Sun, 22 Nov 2026 09:00:00 GMT', 0],
    ['soon', undefined],
    ['', undefined],
    [undefined, undefined],
  ])('%j means %j seconds', (value, seconds) => {
    expect(retryAfterSeconds(value, at)).toBe(seconds);
  });
});
