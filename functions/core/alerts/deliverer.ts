import { logger } from '#functions/core/observability/logger.ts';
import { count } from '#functions/core/observability/metrics.ts';
import { clientEventWrites, noEvents } from '#functions/core/events/client-events.ts';
import { findTenant } from '#functions/core/tenants/tenant-repository.ts';
import { ownerFields, ownerOf, type WebhookOwner } from '#functions/core/webhooks/owner.ts';
import { postSafely, type PostResult } from '#functions/core/webhooks/safe-sender.ts';
import {
  type Attempt,
  claimAttempt,
  disableWebhook,
  findDelivery,
  findSettings,
  holdDelivery,
  releaseAttempt,
} from './alert-repository.ts';
import { type DeliveryMessage, deliveryBody, dropDeliveredBody, finishDelivery } from './deliveries.ts';
import { enterEndpoint } from './endpoint.ts';
import { findEndpointState } from './endpoint-repository.ts';
import { channelProblem, signatureHeader } from './settings.ts';
import { maxAttemptsPerDelivery, maxResponseBodyBytes, webhookConfig } from './webhook-config.ts';

/** The `User-Agent` of each owner's deliveries: a tenant's alerts, a client's events. */
export const userAgents: Record<WebhookOwner['kind'], string> = {
  tenant: 'Service-Alert-Webhook/1.0',
  client: 'Service-Event-Webhook/1.0',
};
/** Spec 8: the receiver has 10 seconds to answer: its status line decides the attempt. */
export const responseTimeoutMs = 10_000;
/**
 * After the status line, the answer's body is read this long at most, and only its first
 * `maxResponseBodyBytes`: the attempt keeps them as text, for the tenant to debug with. A body that
 * is slow to come changes nothing: the status is already in.
 */
export const responseBodyTimeoutMs = 1000;
/** SQS cannot hide a message longer than 12 hours. */
const maxDelaySeconds = 43_200;
/**
 * An attempt holds its endpoint slot (or probe) for the receiver's time-out, the reading of its
 * answer's body, and this margin at most. The margin covers what the slot is held for besides the
 * POST (reading the delivery again and its body before, recording the attempt after: milliseconds
 * each); it is also how long the deliveries held behind a probe wait before they look again
 * (endpoint.ts), so it stays short. A store slower than the margin can only let one attempt more in
 * flight, or a copy post again: a delivery's record is written under a condition, so the outcome
 * recorded is one attempt's, whichever. A worker that dies frees the slot when the lease ends.
 */
const leaseMarginMs = 2_000;

/** What the queue consumer does with the message after an attempt. */
export type AttemptOutcome =
  | { kind: 'done' }
  | { kind: 'retry'; delaySeconds: number }
  /** No attempt was made (the endpoint is at its limit, or paused): the message comes back later, its attempts untouched. */
  | { kind: 'defer'; delaySeconds: number }
  /** The last attempt failed: the message went to the DLQ (`deadLetter`) before the delivery was marked failed. */
  | { kind: 'give_up' };

/** What the queue consumer lends an attempt. */
export interface AttemptHooks {
  /**
   * Moves the message to the DLQ. Called before the delivery is marked failed after its last
   * attempt: if it throws, the delivery is left as it was and the message's next receive tries again.
   */
  deadLetter: () => Promise<void>;
  /** When the invocation ends (ms): no claim on the endpoint outlives it, so a worker that dies frees its slot by then. */
  deadline: number;
  /** How many times SQS has handed out the message, deferrals included. */
  receiveCount: number;
}

/** Seconds a `Retry-After` header asks for (delta-seconds or an HTTP date), if any. */
export function retryAfterSeconds(value: string | string[] | undefined, now = Date.now()): number | undefined {
  const text = Array.isArray(value) ? value[0] : value;
  if (!text) return undefined;
  if (/^\d+$/.test(text.trim())) return Number(text.trim());
  const date = Date.parse(text);
  return Number.isNaN(date) ? undefined : Math.max(0, Math.ceil((date - now) / 1000));
}

/** Characters that could break a log line or how it shows (controls, line and paragraph separators, bidi overrides). */
const unsafeInLogs = /[\p{Cc}\u2028\u2029\u202A-\u202E\u2066-\u2069]/gu;

/**
 * The first bytes of a receiver's answer as text, for the attempt: decoded as UTF-8 leniently (a
 * byte that is not UTF-8 becomes U+FFFD, a character cut at the end is dropped), every character
 * that could break a log (line breaks and tabs included) a space, and never more than
 * `maxResponseBodyBytes` in UTF-8.
 */
export function responseBodyText(bytes: Buffer): string {
  const text = new TextDecoder('utf-8').decode(bytes.subarray(0, maxResponseBodyBytes), { stream: true });
  const safe = Buffer.from(text.replace(unsafeInLogs, ' '), 'utf8');
  // Replacement characters take 3 bytes where 1 was: cut again, dropping a character cut in two.
  return new TextDecoder('utf-8').decode(safe.subarray(0, maxResponseBodyBytes), { stream: true });
}

const describeFailure = (result: PostResult) =>
  result.kind === 'response' ? `HTTP ${result.status}` : `${result.error}: ${result.message}`;

/**
 * Disables the owner's channel (a 410, or days without an answer), if it is still enabled at `url`.
 * A tenant's client hears of it (`webhook.endpoint_disabled`) in the same commit: once, from
 * whichever attempt disabled it.
 */
async function disableChannel(owner: WebhookOwner, url: string, reason: string, why: 'gone' | 'no_answer') {
  const disabledAt = new Date().toISOString();
  const tenant = owner.kind === 'tenant' ? await findTenant(owner.tenantId) : undefined;
  // A deleted tenant's deliveries may still be attempted; its client has no tenant to hear of.
  const events =
    tenant && !tenant.deletedAt
      ? await clientEventWrites(tenant.clientId, [
          {
            type: 'webhook.endpoint_disabled',
            data: { tenantId: tenant.tenantId, reason: why, message: reason, disabledAt },
          },
        ])
      : noEvents;
  if (await disableWebhook(owner, url, reason, disabledAt, events.items)) await events.afterCommit();
}

/**
 * One attempt of one delivery: POST the body (signed per Standard Webhooks) through the safe
 * sender, record the attempt, and say what to do with the message. 2xx is success; 410 stops at
 * once and disables the owner's channel; anything else (3xx included: redirects are not
 * followed, a time-out, a refused or unreachable address) is retried on the schedule, honouring a
 * longer `Retry-After`, until the last attempt.
 *
 * The owner's endpoint comes first (alerts/endpoint.ts): with all its attempt slots held the
 * message is deferred, and while its breaker is open the delivery is held (its log says so and
 * when it is looked at again); neither is an attempt, so no retry is lost to them.
 */
export async function attemptDelivery(message: DeliveryMessage, hooks: AttemptHooks): Promise<AttemptOutcome> {
  const owner = ownerOf(message);
  const [record, settings, endpoint] = await Promise.all([
    findDelivery(owner, message.deliveryId),
    findSettings(owner),
    findEndpointState(owner),
  ]);
  // Gone (expired) or finished already (SQS delivers at least once): nothing to send. A copy of the
  // message that finds it delivered finishes what the first copy may not have: dropping the body.
  if (record?.status === 'delivered') await dropDeliveredBody(record);
  if (!record || record.status === 'delivered' || record.status === 'failed') return { kind: 'done' };
  // A copy of the message that came back before the attempt its delivery waits for (one deferred while
  // another copy attempted): it waits for that time too, so a retry is never made early, nor twice.
  const waitMs = record.nextAttemptAt === undefined ? 0 : Date.parse(record.nextAttemptAt) - Date.now();
  if (waitMs > 1000) return { kind: 'defer', delaySeconds: Math.min(maxDelaySeconds, Math.ceil(waitMs / 1000)) };
  const webhook = settings.webhook;
  const problem = channelProblem(settings);
  if (problem || !webhook) {
    await finishDelivery(record, 'failed', undefined, problem);
    return { kind: 'done' };
  }
  if (record.attempts.length >= maxAttemptsPerDelivery) {
    // Its item holds every attempt: no more fit (webhook-config.ts).
    await finishDelivery(
      record,
      'failed',
      undefined,
      `A delivery makes at most ${maxAttemptsPerDelivery} attempts; this one has made them`,
    );
    return { kind: 'done' };
  }
  const context = { ...ownerFields(owner), deliveryId: record.deliveryId, webhookId: record.webhookId };
  // Another copy of the message (SQS delivers at least once) recorded first, or the delivery
  // expired meanwhile: that copy carries on, this one is dropped.
  const superseded = (): AttemptOutcome => {
    logger.info('Webhook attempt not recorded: the delivery changed meanwhile', context);
    return { kind: 'done' };
  };

  const now = Date.now();
  const leaseUntil = Math.min(now + responseTimeoutMs + responseBodyTimeoutMs + leaseMarginMs, hooks.deadline);
  const entry = await enterEndpoint({
    owner,
    webhook,
    state: endpoint,
    heldSince: record.heldSince,
    receiveCount: hooks.receiveCount,
    leaseUntil,
    now,
    disable: (url, reason) => disableChannel(owner, url, reason, 'no_answer'),
  });
  if (entry.kind === 'busy') {
    count('WebhookAttemptsDeferred');
    return { kind: 'defer', delaySeconds: entry.delaySeconds };
  }
  if (entry.kind === 'held') {
    if (!(await holdDelivery(record, new Date(entry.until).toISOString(), entry.reason, new Date(now).toISOString()))) {
      return superseded();
    }
    count('WebhookAttemptsDeferred');
    return { kind: 'defer', delaySeconds: Math.min(maxDelaySeconds, Math.max(1, Math.ceil((entry.until - now) / 1000))) };
  }

  let result: PostResult | undefined;
  // Whether this copy holds the attempt's claim and has not yet written the delivery's next state.
  let claimHeld = false;
  try {
    // Another copy of the message may have finished this delivery while this one waited for the slot,
    // or be attempting it in another slot right now: the attempt is claimed on the delivery itself
    // (each attempt is recorded, and its claim cleared, before its slot is let go).
    if (!(await claimAttempt(record, leaseUntil, Date.now()))) {
      // Moved on by another copy (dropped), or being attempted by one right now: then this copy comes back
      // once that attempt's claim has ended, rather than being dropped. Dropping it would delete the message
      // under the copy in flight, leaving it nothing to put back for its retry.
      const current = await findDelivery(owner, record.deliveryId);
      const until = current?.attemptingUntil ?? 0;
      const inFlight = current?.status === record.status && current.attempts.length === record.attempts.length;
      if (!inFlight || until <= Date.now()) return superseded();
      count('WebhookAttemptsDeferred');
      return { kind: 'defer', delaySeconds: Math.max(1, Math.ceil((until - Date.now()) / 1000)) };
    }
    claimHeld = true;
    const body = message.body ?? (await deliveryBody(record));
    if (body === undefined) {
      await finishDelivery(record, 'failed', undefined, 'The payload has expired');
      claimHeld = false;
      return { kind: 'done' };
    }
    const started = new Date();
    const timestamp = Math.floor(started.getTime() / 1000);
    result = await postSafely({
      url: webhook.url,
      body,
      timeoutMs: responseTimeoutMs,
      bodyTimeoutMs: responseBodyTimeoutMs,
      maxResponseBytes: maxResponseBodyBytes,
      allowLoopback: webhookConfig().allowLoopback,
      headers: {
        'content-type': 'application/json',
        'user-agent': userAgents[owner.kind],
        'webhook-id': record.webhookId,
        'webhook-timestamp': String(timestamp),
        'webhook-signature': signatureHeader(webhook.secrets, record.webhookId, timestamp, body, started.getTime()),
      },
    });
    const outcome = await recordAttempt(owner, record, webhook.url, started, result, hooks, superseded);
    claimHeld = false;
    return outcome;
  } finally {
    // An attempt that stopped before its outcome was written (the DLQ out of reach, say) lets its claim
    // go, so the message's next receive attempts at once rather than after the lease.
    if (claimHeld) await releaseAttempt(record, leaseUntil);
    // The slot is free (and the breaker told) once the attempt is recorded, or whatever happened: a copy
    // that takes the slot next sees this attempt. A worker that dies holding it frees it when its lease ends.
    await entry.leave(result);
  }
}

/** Records the attempt's outcome on the delivery, and says what to do with the message. */
async function recordAttempt(
  owner: WebhookOwner,
  record: NonNullable<Awaited<ReturnType<typeof findDelivery>>>,
  url: string,
  started: Date,
  result: PostResult,
  hooks: AttemptHooks,
  superseded: () => AttemptOutcome,
): Promise<AttemptOutcome> {
  const context = { ...ownerFields(owner), deliveryId: record.deliveryId, webhookId: record.webhookId };
  const attempt: Attempt = {
    at: started.toISOString(),
    url,
    durationMs: Math.round(result.durationMs),
    ...(result.kind === 'response'
      ? { statusCode: result.status, responseBody: responseBodyText(result.body) }
      : { error: `${result.error}: ${result.message}` }),
  };
  if (result.kind === 'response' && result.status >= 200 && result.status < 300) {
    if (!(await finishDelivery(record, 'delivered', attempt))) return superseded();
    count('WebhookDeliveries');
    logger.info('Webhook delivered', { ...context, statusCode: result.status });
    return { kind: 'done' };
  }
  if (result.kind === 'response' && result.status === 410) {
    const reason = `The receiver answered 410 Gone at ${attempt.at}`;
    // The channel first: whoever sees the delivery failed sees the channel disabled too (a redeliver is then
    // refused), and a stop between the two leaves the message to come back to a disabled channel, which fails it.
    await disableChannel(owner, url, reason, 'gone');
    if (!(await finishDelivery(record, 'failed', attempt, reason))) return superseded();
    count('WebhookFailures');
    logger.warn('Webhook receiver is gone; channel disabled', context);
    return { kind: 'done' };
  }
  const delays = webhookConfig().retryDelaysSeconds;
  const attemptInRound = record.attempts.length - record.roundStart + 1;
  const scheduled = delays[attemptInRound - 1];
  if (scheduled === undefined) {
    // The DLQ first: a failed delivery is never retried, so its message must be there before it is marked.
    await hooks.deadLetter();
    const reason = `Gave up after ${attemptInRound} attempts; last: ${describeFailure(result)}`;
    if (!(await finishDelivery(record, 'failed', attempt, reason))) return superseded();
    count('WebhookFailures');
    logger.warn('Webhook delivery failed for good', { ...context, attempts: attemptInRound });
    return { kind: 'give_up' };
  }
  const asked = result.kind === 'response' ? retryAfterSeconds(result.headers['retry-after']) : undefined;
  const delaySeconds = Math.min(maxDelaySeconds, Math.max(scheduled, asked ?? 0));
  const nextAttemptAt = new Date(Date.now() + delaySeconds * 1000).toISOString();
  if (!(await finishDelivery(record, 'retrying', attempt, undefined, nextAttemptAt))) return superseded();
  count('WebhookRetries');
  logger.info('Webhook attempt failed; will retry', { ...context, failure: describeFailure(result), delaySeconds });
  return { kind: 'retry', delaySeconds };
}
