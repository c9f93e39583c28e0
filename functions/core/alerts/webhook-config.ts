/** Configuration of alert deliveries, read from the environment once per cold start. */
export interface WebhookConfig {
  /**
   * Allow `http:` URLs and loopback receivers (127.0.0.0/8, ::1). Only the local twin sets it
   * (WEBHOOK_ALLOW_LOOPBACK=true); never on AWS.
   */
  allowLoopback: boolean;
  /** Delays before each retry, in seconds (WEBHOOK_RETRY_DELAYS; tests shorten them). */
  retryDelaysSeconds: readonly number[];
  /**
   * How long a paused endpoint waits before its next probe, in seconds: the first pause, and the
   * longest it doubles up to (WEBHOOK_BREAKER_COOLDOWN `first,longest`; tests shorten them).
   */
  breakerCooldownSeconds: { first: number; longest: number };
}

/** DESIGN 7: retries at 5 s, 5 min, 30 min, 2 h, 5 h, 10 h, 10 h after the first try. */
export const defaultRetryDelaysSeconds = [5, 300, 1800, 7200, 18_000, 36_000, 36_000] as const;

/**
 * A paused endpoint is first probed after 30 seconds, then after twice as long each time the probe
 * fails, up to 10 minutes (docs/alerts.md, Endpoint limits).
 */
export const defaultBreakerCooldownSeconds = { first: 30, longest: 600 } as const;

/** The first bytes of a receiver's answer each attempt keeps, as text (deliverer.ts). */
export const maxResponseBodyBytes = 1024;

/**
 * The attempts a delivery keeps over all its rounds (a redelivery starts another): its item holds
 * them all, and with each to a 2,048-character URL and with a 1 KB answer, 100 take about 315 KB of
 * DynamoDB's 400 KB item (bench/item-sizes.ts, checked in test/unit/item-sizes.test.ts). A delivery
 * that has made them fails instead of making another.
 */
export const maxAttemptsPerDelivery = 100;

let cached: WebhookConfig | undefined;

export function webhookConfig(): WebhookConfig {
  cached ??= {
    allowLoopback: process.env.WEBHOOK_ALLOW_LOOPBACK === 'true',
    retryDelaysSeconds: parseDelays(process.env.WEBHOOK_RETRY_DELAYS),
    breakerCooldownSeconds: parseCooldown(process.env.WEBHOOK_BREAKER_COOLDOWN),
  };
  return cached;
}

function parseDelays(raw: string | undefined): readonly number[] {
  if (!raw) return defaultRetryDelaysSeconds;
  const delays = raw.split(',').map((part) => Number(part.trim()));
  if (delays.length === 0 || !delays.every((delay) => Number.isInteger(delay) && delay >= 0 && delay <= 43_200)) {
    throw new Error('WEBHOOK_RETRY_DELAYS must be a comma-separated list of whole seconds from 0 to 43200');
  }
  return delays;
}

function parseCooldown(raw: string | undefined): WebhookConfig['breakerCooldownSeconds'] {
  if (!raw) return defaultBreakerCooldownSeconds;
  const [first, longest, ...rest] = raw.split(',').map((part) => Number(part.trim()));
  if (
    first === undefined ||
    longest === undefined ||
    rest.length > 0 ||
    !Number.isInteger(first) ||
    !Number.isInteger(longest) ||
    first < 1 ||
    longest < first ||
    longest > 3600
  ) {
    throw new Error('WEBHOOK_BREAKER_COOLDOWN must be two whole seconds, first,longest, with 1 <= first <= longest <= 3600');
  }
  return { first, longest };
}
