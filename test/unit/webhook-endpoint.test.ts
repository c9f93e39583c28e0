import { describe, expect, test } from 'vitest';
import {
  breakerGate,
  busyDelaySeconds,
  cooldownMs,
  describeEndpoint,
  freeSlots,
  heldUntil,
  longestRecheckMs,
  maxInFlightLimits,
  stalled,
} from '#functions/core/alerts/endpoint.ts';
import { defaultBreakerCooldownSeconds } from '#functions/core/alerts/webhook-config.ts';
import type { BreakerRecord } from '#functions/core/alerts/endpoint-repository.ts';
import type { PostResult } from '#functions/core/webhooks/safe-sender.ts';
import updateSettingsSchema from '#schemas/update-settings.schema.json' with { type: 'json' };

const url = 'https://hooks.example.com/k';
const now = Date.parse('2026-03-01T12:00:00Z');
const breaker = (fields: Partial<BreakerRecord> = {}): BreakerRecord => ({ tenantId: 1, url, stalls: 5, ...fields });

describe('breaker gate', () => {
  test('closed without a breaker, for another URL, or while it only counts stalls', () => {
    expect(breakerGate(undefined, url, now)).toEqual({ kind: 'closed' });
    expect(breakerGate(breaker({ url: 'https://old.example.com', openUntil: now + 1000 }), url, now)).toEqual({ kind: 'closed' });
    expect(breakerGate(breaker({ stalls: 3 }), url, now)).toEqual({ kind: 'closed' });
  });

  test('paused until its pause ends, then one probe; paused again while a probe is out', () => {
    expect(breakerGate(breaker({ openUntil: now + 1000 }), url, now)).toEqual({ kind: 'paused', until: now + 1000 });
    expect(breakerGate(breaker({ openUntil: now - 1 }), url, now)).toEqual({ kind: 'probe' });
    expect(breakerGate(breaker({ openUntil: now - 1, probeUntil: now + 500 }), url, now)).toEqual({
      kind: 'paused',
      until: now + 500,
    });
    // A probe whose holder died: its lease is over, another attempt probes.
    expect(breakerGate(breaker({ openUntil: now - 1, probeUntil: now - 1 }), url, now)).toEqual({ kind: 'probe' });
  });

  test('only a receiver that never answered counts as a stall', () => {
    const error = (kind: 'timeout' | 'connection_failed' | 'dns_failed' | 'refused_address'): PostResult => ({
      kind: 'error',
      error: kind,
      message: '',
      durationMs: 1,
    });
    expect(stalled(error('timeout'))).toBe(true);
    expect(stalled(error('connection_failed'))).toBe(true);
    expect(stalled(error('dns_failed'))).toBe(true);
    expect(stalled(error('refused_address'))).toBe(false);
    expect(stalled({ kind: 'response', status: 503, headers: {}, body: Buffer.alloc(0), durationMs: 1 })).toBe(false);
  });
});

describe('attempt slots', () => {
  test('the free ones, lowest first: never held, released, or with a lease that ended; none beyond the limit', () => {
    const slots = [
      { slot: 0, claimId: 'a', claimedUntil: now + 5000 },
      { slot: 1, claimedUntil: 0 },
      { slot: 2, claimId: 'dead', claimedUntil: now - 1 },
      { slot: 4, claimId: 'b', claimedUntil: now + 5000 },
    ];
    expect(freeSlots(slots, 4, now)).toEqual([1, 2, 3]);
    expect(freeSlots(slots, 1, now)).toEqual([]);
    expect(freeSlots([], maxInFlightLimits.fallback, now)).toEqual([0, 1]);
  });

  test('a busy endpoint defers by up to the earliest lease end, longer for a message deferred often, at most 15 minutes', () => {
    const slots = [
      { slot: 0, claimId: 'a', claimedUntil: now + 12_000 },
      { slot: 1, claimId: 'b', claimedUntil: now + 8_000 },
    ];
    expect(busyDelaySeconds(slots, now, 1, 0)).toBe(2);
    expect(busyDelaySeconds(slots, now, 1, 1)).toBe(10);
    expect(busyDelaySeconds(slots, now, 40, 1)).toBe(49);
    expect(busyDelaySeconds(slots, now, 5000, 1)).toBe(900);
    expect(busyDelaySeconds([], now, 3, 1)).toBe(4);
  });

  test("the schema bounds the owner's setting (a tenant's, a client's) as the deliverer does", () => {
    const maxInFlight = updateSettingsSchema.$defs.webhook.oneOf[1] as {
      properties: { maxInFlight: { minimum: number; maximum: number } };
    };
    expect(maxInFlight.properties.maxInFlight).toMatchObject({ minimum: maxInFlightLimits.min, maximum: maxInFlightLimits.max });
  });
});

describe('pauses', () => {
  test('a held delivery comes back when the pause ends, and once held a while at least as long again, up to 15 minutes', () => {
    expect(heldUntil(now + 30_000, undefined, now, 0)).toBe(now + 30_000);
    expect(heldUntil(now + 30_000, undefined, now, 1)).toBe(now + 30_000 + 7_500);
    const tenMinutesAgo = new Date(now - 600_000).toISOString();
    expect(heldUntil(now + 30_000, tenMinutesAgo, now, 0)).toBe(now + 600_000);
    const daysAgo = new Date(now - 86_400_000).toISOString();
    expect(heldUntil(now + 30_000, daysAgo, now, 0)).toBe(now + longestRecheckMs);
  });

  test('each pause doubles from 30 seconds up to 10 minutes, with a quarter of jitter either way', () => {
    expect([1, 2, 3, 5, 6, 9].map((opens) => cooldownMs(opens, 0.5, defaultBreakerCooldownSeconds))).toEqual([
      30_000, 60_000, 120_000, 480_000, 600_000, 600_000,
    ]);
    expect(cooldownMs(1, 0, defaultBreakerCooldownSeconds)).toBe(22_500);
    expect(cooldownMs(1, 1, defaultBreakerCooldownSeconds)).toBe(37_500);
  });

  test('settings show the endpoint closed, open or probing, its stalls and its attempts in flight', () => {
    const webhook = { url, enabled: true, secrets: [] };
    const slots = [{ slot: 0, claimId: 'a', claimedUntil: now + 1000 }];
    expect(describeEndpoint({ slots }, webhook, now)).toEqual({ state: 'closed', stalls: 0, inFlight: 1, maxInFlight: 2 });
    const open = breaker({ openedAt: now - 60_000, openUntil: now + 30_000, opens: 1 });
    expect(describeEndpoint({ breaker: open, slots: [] }, { ...webhook, maxInFlight: 5 }, now)).toEqual({
      state: 'open',
      stalls: 5,
      inFlight: 0,
      maxInFlight: 5,
      pausedSince: new Date(now - 60_000).toISOString(),
      nextProbeAt: new Date(now + 30_000).toISOString(),
    });
    const probing = breaker({ openedAt: now - 60_000, openUntil: now - 1, probeUntil: now + 5000 });
    expect(describeEndpoint({ breaker: probing, slots: [] }, webhook, now).state).toBe('probing');
    // Stalls counted on a URL the tenant has changed since do not show.
    expect(describeEndpoint({ breaker: { ...open, url: 'https://old.example.com' }, slots: [] }, webhook, now).state).toBe(
      'closed',
    );
  });
});
