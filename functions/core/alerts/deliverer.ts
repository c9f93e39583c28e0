import { logger } from '../api/logger.ts';
import { count } from '../api/metrics.ts';
import { postSafely, type PostResult } from '../webhooks/safe-sender.ts';
import { type Attempt, type DeliveryMessage, deliveryBody, findDelivery, finishDelivery } from './deliveries.ts';
import { disableWebhook, findSettings, signatureHeader } from './settings.ts';
import { webhookConfig } from './webhook-config.ts';

export const userAgent = 'Service-Alert-Webhook/1.0';
/** Spec 8: the receiver has 10 seconds to answer. */
export const responseTimeoutMs = 10_000;
/** SQS cannot hide a message longer than 12 hours. */
const maxDelaySeconds = 43_200;

/** What the queue consumer does with the message after an attempt. */
export type AttemptOutcome =
  | { kind: 'done' }
  | { kind: 'retry'; delaySeconds: number }
  /** The last attempt failed: the message goes to the DLQ. */
  | { kind: 'give_up' };

/** Seconds a `Retry-After` header asks for (delta-seconds or an HTTP date), if any. */
export function retryAfterSeconds(value: string | string[] | undefined, now = Date.now()): number | undefined {
  const text = Array.isArray(value) ? value[0] : value;
  if (!text) return undefined;
  if (/^\d+$/.test(text.trim())) return Number(text.trim());
  const date = Date.parse(text);
  return Number.isNaN(date) ? undefined : Math.max(0, Math.ceil((date - now) / 1000));
}

const describeFailure = (result: PostResult) =>
  result.kind === 'response' ? `HTTP ${result.status}` : `${result.error}: ${result.message}`;

/**
 * One attempt of one delivery: POST the body (signed per Standard Webhooks) through the safe
 * sender, record the attempt, and say what to do with the message. 2xx is success; 410 stops at
 * once and disables the tenant's channel; anything else (3xx included: redirects are not
 * followed, a time-out, a refused or unreachable address) is retried on the schedule, honouring a
 * longer `Retry-After`, until the last attempt.
 */
export async function attemptDelivery(message: DeliveryMessage): Promise<AttemptOutcome> {
  const record = await findDelivery(message.tenantId, message.deliveryId);
  // Gone (expired) or finished already (SQS delivers at least once): nothing to do.
  if (!record || record.status === 'delivered' || record.status === 'failed') return { kind: 'done' };
  const settings = await findSettings(record.tenantId);
  const webhook = settings.webhook;
  if (!webhook?.enabled) {
    await finishDelivery(
      record,
      'failed',
      undefined,
      webhook ? "The tenant's webhook channel is disabled" : 'No webhook URL is configured',
    );
    return { kind: 'done' };
  }
  const body = message.body ?? (await deliveryBody(record));
  if (body === undefined) {
    await finishDelivery(record, 'failed', undefined, 'The payload has expired');
    return { kind: 'done' };
  }

  const started = new Date();
  const timestamp = Math.floor(started.getTime() / 1000);
  const result = await postSafely({
    url: webhook.url,
    body,
    timeoutMs: responseTimeoutMs,
    allowLoopback: webhookConfig().allowLoopback,
    headers: {
      'content-type': 'application/json',
      'user-agent': userAgent,
      'webhook-id': record.webhookId,
      'webhook-timestamp': String(timestamp),
      'webhook-signature': signatureHeader(webhook.secrets, record.webhookId, timestamp, body, started.getTime()),
    },
  });
  const attempt: Attempt = {
    at: started.toISOString(),
    durationMs: Math.round(result.durationMs),
    ...(result.kind === 'response' ? { statusCode: result.status } : { error: `${result.error}: ${result.message}` }),
  };
  const context = { tenantId: record.tenantId, deliveryId: record.deliveryId, webhookId: record.webhookId };

  if (result.kind === 'response' && result.status >= 200 && result.status < 300) {
    await finishDelivery(record, 'delivered', attempt);
    count('WebhookDeliveries');
    logger.info('Webhook delivered', { ...context, statusCode: result.status });
    return { kind: 'done' };
  }
  if (result.kind === 'response' && result.status === 410) {
    const reason = `The receiver answered 410 Gone at ${attempt.at}`;
    await finishDelivery(record, 'failed', attempt, reason);
    await disableWebhook(record.tenantId, webhook.url, reason);
    count('WebhookFailures');
    logger.warn('Webhook receiver is gone; channel disabled', context);
    return { kind: 'done' };
  }
  const delays = webhookConfig().retryDelaysSeconds;
  const attemptInRound = record.attempts.length - record.roundStart + 1;
  const scheduled = delays[attemptInRound - 1];
  if (scheduled === undefined) {
    await finishDelivery(record, 'failed', attempt, `Gave up after ${attemptInRound} attempts; last: ${describeFailure(result)}`);
    count('WebhookFailures');
    logger.warn('Webhook delivery failed for good', { ...context, attempts: attemptInRound });
    return { kind: 'give_up' };
  }
  const asked = result.kind === 'response' ? retryAfterSeconds(result.headers['retry-after']) : undefined;
  const delaySeconds = Math.min(maxDelaySeconds, Math.max(scheduled, asked ?? 0));
  const nextAttemptAt = new Date(Date.now() + delaySeconds * 1000).toISOString();
  await finishDelivery(record, 'retrying', attempt, undefined, nextAttemptAt);
  count('WebhookRetries');
  logger.info('Webhook attempt failed; will retry', { ...context, failure: describeFailure(result), delaySeconds });
  return { kind: 'retry', delaySeconds };
}
