import { randomUUID } from 'node:crypto';
import { logger } from '#functions/core/observability/logger.ts';
import { count } from '#functions/core/observability/metrics.ts';
import type { PostResult } from '#functions/core/webhooks/safe-sender.ts';
import { ownerFields, type WebhookOwner } from '#functions/core/webhooks/owner.ts';
import type { WebhookChannel } from './alert-repository.ts';
import {
  type BreakerRecord,
  claimProbe,
  claimSlot,
  closeBreaker,
  countStall,
  type EndpointState,
  openBreaker,
  releaseSlot,
  reopenBreaker,
  type SlotRecord,
} from './endpoint-repository.ts';
import { webhookConfig } from './webhook-config.ts';

// What one owner's webhook endpoint takes (a tenant's, or a client's), so that one slow or dead
// receiver cannot hold the deliverer (and so the other owners' deliveries) back: at most `maxInFlight` attempts at once,
// the excess deferred; and a circuit breaker that, after `stallsToOpen` attempts in a row time out
// or fail to connect, pauses the endpoint and lets one probe at a time find out when it is back.
// Deferrals are not attempts: a delivery keeps its whole retry schedule. (Svix throttles per
// endpoint and disables one that fails for days; Stripe stops after days of failures too.)

/** Stalls (time-outs, failed connections) in a row that open the breaker. */
export const stallsToOpen = 5;
/** Attempts in flight per endpoint: unless the owner sets another, and the least and most it may set. */
export const maxInFlightLimits = { fallback: 2, min: 1, max: 10 } as const;
/** An endpoint paused this long, with every probe stalling, is disabled as a 410 disables it. */
export const disableAfterMs = 3 * 24 * 3600 * 1000;
/** A delivery held back this long already is checked again at most this far apart (its time held, up to this). */
export const longestRecheckMs = 15 * 60_000;

export const maxInFlightOf = (webhook: Pick<WebhookChannel, 'maxInFlight'>) => webhook.maxInFlight ?? maxInFlightLimits.fallback;

/** What the breaker's stall count takes: the receiver never answered (a time-out, a refused or failed connection, no DNS answer). */
export const stalled = (result: PostResult) =>
  result.kind === 'error' &&
  (result.error === 'timeout' || result.error === 'connection_failed' || result.error === 'dns_failed');

/** The breaker's word on an attempt to `url` now: go ahead, be the probe, or wait until `until`. */
export type Gate = { kind: 'closed' } | { kind: 'probe' } | { kind: 'paused'; until: number };

export function breakerGate(breaker: BreakerRecord | undefined, url: string, now: number): Gate {
  if (breaker?.url !== url || breaker.openUntil === undefined) return { kind: 'closed' };
  if (now < breaker.openUntil) return { kind: 'paused', until: breaker.openUntil };
  if (breaker.probeUntil !== undefined && now < breaker.probeUntil) return { kind: 'paused', until: breaker.probeUntil };
  return { kind: 'probe' };
}

/** The slots an attempt may take now, lowest first (one never held, released, or whose lease is over). */
export function freeSlots(slots: readonly SlotRecord[], maxInFlight: number, now: number): number[] {
  const held = new Set(slots.filter((slot) => slot.claimedUntil > now).map((slot) => slot.slot));
  return Array.from({ length: maxInFlight }, (_, slot) => slot).filter((slot) => !held.has(slot));
}

/**
 * How long a message waits when every slot is held: a slot is free again by the time the earliest
 * lease ends, at the latest (sooner, when the receiver answers quickly), so a wait spread between a
 * second and then, so the waiting messages do not come back together; plus a second per receive so
 * far, so a long backlog comes back less and less often (each deferral is a receive).
 */
export function busyDelaySeconds(slots: readonly SlotRecord[], now: number, receiveCount: number, random = Math.random()) {
  const leaseEnds = slots.filter((slot) => slot.claimedUntil > now).map((slot) => slot.claimedUntil);
  // None held as read: racers took the free ones meanwhile, and one is likely free again soon.
  const untilFreeMs = leaseEnds.length === 0 ? 0 : Math.min(...leaseEnds) - now;
  return Math.min(900, 1 + Math.round((random * untilFreeMs) / 1000) + receiveCount);
}

/**
 * Until when a delivery waits for a paused endpoint: the end of the pause (or of the probe in
 * flight), and, once it has been held a while, at least that long again, up to 15 minutes; plus up
 * to a quarter more, so the held deliveries do not all come back at the probe's instant.
 */
export function heldUntil(gateUntil: number, heldSince: string | undefined, now: number, random = Math.random()): number {
  const heldFor = heldSince === undefined ? 0 : Math.max(0, now - Date.parse(heldSince));
  const base = Math.max(gateUntil, now + Math.min(heldFor, longestRecheckMs));
  return Math.round(base + random * 0.25 * (base - now));
}

/** The pause after the breaker's `opens`-th opening in a run of stalls: doubling from the first, up to the longest, ±25%. */
export function cooldownMs(opens: number, random = Math.random(), cooldown = webhookConfig().breakerCooldownSeconds): number {
  const { first, longest } = cooldown;
  return Math.round(Math.min(first * 2 ** (opens - 1), longest) * 1000 * (0.75 + random / 2));
}

const iso = (ms: number | undefined) => (ms === undefined ? undefined : new Date(ms).toISOString());

/** What GET /tenant/settings (and /tenants/settings) shows of the endpoint. */
export function describeEndpoint(state: EndpointState, webhook: WebhookChannel, now = Date.now()) {
  const breaker = state.breaker?.url === webhook.url ? state.breaker : undefined;
  const gate = breakerGate(breaker, webhook.url, now);
  const probing = breaker?.probeUntil !== undefined && breaker.probeUntil > now;
  return {
    state: gate.kind === 'closed' ? 'closed' : probing ? 'probing' : 'open',
    stalls: breaker?.stalls ?? 0,
    inFlight: state.slots.filter((slot) => slot.claimedUntil > now).length,
    maxInFlight: maxInFlightOf(webhook),
    ...(breaker?.openedAt === undefined ? {} : { pausedSince: iso(breaker.openedAt) }),
    ...(breaker?.openUntil === undefined ? {} : { nextProbeAt: iso(breaker.openUntil) }),
  };
}

/** Why deliveries wait, as their log shows it. */
const pausedReason = (breaker: BreakerRecord | undefined) =>
  `The endpoint is paused: ${breaker?.stalls ?? stallsToOpen} attempts in a row timed out or could not connect` +
  `${breaker?.openedAt === undefined ? '' : ` (paused since ${iso(breaker.openedAt)})`}; one probe at a time finds out when it answers again`;

export interface EndpointRequest {
  owner: WebhookOwner;
  webhook: WebhookChannel;
  /** The endpoint as read at the start of the attempt. */
  state: EndpointState;
  /** The delivery's `heldSince`, when the breaker held it before. */
  heldSince: string | undefined;
  /** How many times SQS has handed out the message, deferrals included. */
  receiveCount: number;
  /** Until when an attempt holds its slot or its probe: the receiver's time-out, and never past the invocation's end. */
  leaseUntil: number;
  now: number;
  /**
   * Disables the channel, as a 410 does, when the endpoint has been paused for days (the deliverer's
   * own, which also tells the integrator).
   */
  disable: (url: string, reason: string) => Promise<void>;
}

/**
 * The endpoint's answer to one attempt: `busy` (every slot held: come back in `delaySeconds`),
 * `held` (the breaker is open or a probe is in flight: come back at `until`), or `admitted`, with
 * `leave` to call once the attempt is over (its result, or none when it made no request). `leave`
 * frees the slot and counts the stall, or closes the breaker when the receiver answered; a
 * failure there is logged, not thrown: a slot whose release failed frees itself when its lease
 * ends, and a stall not counted only delays the pause.
 */
export type Entry =
  | { kind: 'busy'; delaySeconds: number }
  | { kind: 'held'; until: number; reason: string }
  | { kind: 'admitted'; probe: boolean; leave: (result?: PostResult) => Promise<void> };

export async function enterEndpoint(request: EndpointRequest): Promise<Entry> {
  const { owner, webhook, state, now } = request;
  const gate = breakerGate(state.breaker, webhook.url, now);
  const held = (until: number): Entry => ({
    kind: 'held',
    until: heldUntil(until, request.heldSince, now),
    reason: pausedReason(state.breaker),
  });
  if (gate.kind === 'paused') return held(gate.until);
  if (gate.kind === 'probe') {
    const probeId = randomUUID();
    // Another attempt is the probe: this one waits for what it finds.
    if (!(await claimProbe(owner, webhook.url, probeId, request.leaseUntil, now))) return held(request.leaseUntil);
    logger.info('Webhook endpoint probed', ownerFields(owner));
    return { kind: 'admitted', probe: true, leave: (result) => leaveProbe(request, probeId, result) };
  }
  for (const slot of freeSlots(state.slots, maxInFlightOf(webhook), now)) {
    const claimId = randomUUID();
    // A racer may have taken it since the read: the next free one, if any.
    if (await claimSlot(owner, slot, claimId, request.leaseUntil, now)) {
      return { kind: 'admitted', probe: false, leave: (result) => leaveSlot(request, slot, claimId, result) };
    }
  }
  return { kind: 'busy', delaySeconds: busyDelaySeconds(state.slots, now, request.receiveCount) };
}

const logged = async (what: string, context: Record<string, unknown>, work: () => Promise<unknown>) => {
  try {
    await work();
  } catch (error) {
    logger.error(what, { ...context, error: error as Error });
  }
};

async function leaveSlot(request: EndpointRequest, slot: number, claimId: string, result: PostResult | undefined) {
  const { owner, webhook, state } = request;
  const context = { ...ownerFields(owner), slot };
  await logged('A webhook attempt slot could not be released; its lease frees it', context, () =>
    releaseSlot(owner, slot, claimId),
  );
  if (!result) return;
  await logged("The webhook endpoint's breaker could not be updated", context, async () => {
    if (!stalled(result)) {
      const breaker = state.breaker;
      if (breaker?.url === webhook.url && (breaker.stalls > 0 || breaker.openUntil !== undefined)) {
        await closeBreaker(owner, webhook.url);
      }
      return;
    }
    const breaker = await countStall(owner, webhook.url, Date.now());
    if (breaker.stalls < stallsToOpen || breaker.openUntil !== undefined) return;
    const openUntil = Date.now() + cooldownMs(1);
    if (await openBreaker(owner, webhook.url, stallsToOpen, openUntil, Date.now())) {
      count('WebhookEndpointsOpened');
      logger.warn('Webhook endpoint paused: its attempts keep timing out or failing to connect', {
        ...ownerFields(owner),
        stalls: breaker.stalls,
        nextProbeAt: iso(openUntil),
      });
    }
  });
}

async function leaveProbe(request: EndpointRequest, probeId: string, result: PostResult | undefined) {
  const { owner, webhook, state } = request;
  const context = ownerFields(owner);
  // No request made: the probe's lease ends by itself and another attempt probes.
  if (!result) return;
  await logged("The webhook endpoint's breaker could not be updated after its probe", context, async () => {
    if (!stalled(result)) {
      await closeBreaker(owner, webhook.url);
      logger.info('Webhook endpoint answers again: resumed', context);
      return;
    }
    const opens = (state.breaker?.opens ?? 1) + 1;
    const reopened = await reopenBreaker(owner, probeId, Date.now() + cooldownMs(opens));
    if (!reopened) return;
    count('WebhookEndpointsOpened');
    const pausedFor = Date.now() - (reopened.openedAt ?? Date.now());
    if (pausedFor < disableAfterMs) {
      logger.warn('Webhook endpoint probe stalled: paused again', { ...context, nextProbeAt: iso(reopened.openUntil) });
      return;
    }
    // Days without an answer: the channel is disabled (deliveries fail, and can be redelivered once it is enabled).
    const reason = `No answer for ${Math.floor(pausedFor / 86_400_000)} days: every attempt since ${iso(reopened.openedAt)} timed out or could not connect`;
    await request.disable(webhook.url, reason);
    await closeBreaker(owner, webhook.url);
    logger.warn('Webhook endpoint disabled after days without an answer', context);
  });
}
