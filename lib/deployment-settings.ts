import type { Construct } from 'constructs';
import { stageContext } from './stage.ts';
import { type WholeNumberLimits, wholeNumberSetting } from '#functions/core/environment-settings.ts';
import { type DispatchSettings, dispatchSettingLimits } from '#functions/core/schedules/dispatch-settings.ts';
import { type RetentionSettings, retentionSettingLimits } from '#functions/core/store/retention.ts';
import type { ConsumerConcurrencySetting } from '#functions/routes.ts';
import {
  ACCOUNT_API_BUCKET,
  type ConcurrencySettings,
  HOT_ROUTES,
  type HotRouteSetting,
  type Reservation,
  reservations,
} from './throttling.ts';

/**
 * The stage's default route throttling (DefaultRouteSettings) when the context sets none: the bucket
 * EACH route with a token and no bucket setting of its own has to itself (API Gateway keeps one per
 * route; lib/throttling.ts). 200 a second, bursts of 400: twice the edge's per-caller limit (100 a
 * second), so no single token empties a route's bucket, and far above what those routes see at 10 times
 * the reference load (10,000 tenants × 100 requests a day = 12 a second over all of them). Lowering it
 * would not bound a flood spread over every route (about 70 buckets): that is the account's bucket and
 * Lambda concurrency's part (docs/operations.md, Route buckets and reserved concurrency).
 */
export const DEFAULT_API_RATE_LIMIT = 200;
export const DEFAULT_API_BURST_LIMIT = 400;
/**
 * Each route that takes no token (docs, JWKS, health, the session, and the $default route of unmatched
 * paths) has a bucket of its own this size, so a flood on one of them is answered 429 there, and
 * reaches its function at 50 a second at most. The SSO landing has a bigger one (lib/throttling.ts).
 */
export const DEFAULT_ANONYMOUS_RATE_LIMIT = 50;
export const DEFAULT_ANONYMOUS_BURST_LIMIT = 100;

/**
 * Fire workers that may run at once when the fire queue is busy: the most its event source runs,
 * and, like every consumer's setting, reserved for it (taken from the account's unreserved
 * concurrency) unless the stage turns reservations off. One worker fires about 800 schedules a
 * second and one shard of the due index takes about 500, so the default matches the default 16
 * shards (docs/schedules.md, section At scale). The bounds, here and below, are the event source mapping's own for maximum
 * concurrency.
 */
export const FIRE_CONCURRENCY: WholeNumberLimits = { fallback: 10, min: 2, max: 1000 };
/**
 * Reload workers at most. A worker records about 20 loads a second (a few DynamoDB requests each,
 * in order within a FIFO group), so 50 turn the 200,000 loads of a burst of 100,000 schedules into
 * runs in about 3 minutes.
 */
export const RELOAD_CONCURRENCY: WholeNumberLimits = { fallback: 50, min: 2, max: 1000 };
/**
 * Webhook deliverers at most. A batch's 10 deliveries go out in parallel, each waiting up to 10 s for
 * its receiver, so 20 keep up to 200 attempts in flight.
 */
export const WEBHOOK_CONCURRENCY: WholeNumberLimits = { fallback: 20, min: 2, max: 1000 };

/** Each consumer's concurrency setting, by name. */
export const CONSUMER_CONCURRENCY: Record<ConsumerConcurrencySetting, WholeNumberLimits> = {
  reloadConcurrency: RELOAD_CONCURRENCY,
  webhookConcurrency: WEBHOOK_CONCURRENCY,
  fireConcurrency: FIRE_CONCURRENCY,
};

/**
 * The account's Lambda concurrent executions in the stage's region (its Service Quotas value):
 * reservations are checked against it at synth, and the account concurrency alarm fires at a share
 * of it. 1,000 is Lambda's default quota; new accounts may have less.
 */
export const ACCOUNT_CONCURRENCY_LIMIT: WholeNumberLimits = { fallback: 1000, min: 10, max: 1_000_000 };
/** Lambda refuses a reservation that would leave fewer than this many of the account's executions unreserved. */
// https://docs.aws.amazon.com/lambda/latest/dg/configuration-concurrency.html (reserve up to the unreserved concurrency, minus 100).
export const MINIMUM_UNRESERVED_CONCURRENCY = 100;

/** The operational settings a deployer gives as CDK context (the stage's in cdk.json, or `-c name=value`). */
export interface DeploymentSettings extends DispatchSettings, RetentionSettings, ConcurrencySettings {
  /** Subscribed to the alarm topic when set (SNS sends a confirmation e-mail first). */
  alarmEmail?: string;
  /** Steady-state requests per second EACH route with a token accepts (its own bucket) before answering 429. */
  apiRateLimit: number;
  /** Requests each such route accepts in a burst above the rate (a whole number). */
  apiBurstLimit: number;
  /** Steady requests per second each anonymous route accepts, in a bucket of its own. */
  anonymousRateLimit: number;
  anonymousBurstLimit: number;
  accountConcurrencyLimit: number;
  /**
   * Whether the stack reserves concurrency (the anonymous, sign-in and agent routes, the consumers, the
   * timers: lib/throttling.ts); off, nothing is reserved, and the consumers are only capped.
   */
  reserveConcurrency: boolean;
}

/**
 * A bucket setting from context: a positive number (`wholeNumber`, the burst: a whole one) of at most
 * API Gateway's own for the account and region, which no route's bucket can pass. Strings from the
 * command line, numbers from cdk.json.
 */
function throttleSetting(scope: Construct, name: string, fallback: number, wholeNumber: boolean): number {
  const raw = stageContext(scope, name);
  if (raw === undefined || raw === '') return fallback;
  const value = typeof raw === 'number' ? raw : typeof raw === 'string' ? Number(raw.trim()) : Number.NaN;
  const max = wholeNumber ? ACCOUNT_API_BUCKET.burstLimit : ACCOUNT_API_BUCKET.rateLimit;
  if (!Number.isFinite(value) || value <= 0 || value > max || (wholeNumber && !Number.isInteger(value)))
    throw new Error(
      `Context ${name} must be a positive ${wholeNumber ? 'whole ' : ''}number of at most ${max} ` +
        `(API Gateway's ${wholeNumber ? 'burst' : 'rate'} for the whole account and region, which no route's bucket can pass), ` +
        `not "${String(raw)}"`,
    );
  return value;
}

/** A whole number from context within its limits (the functions' own reader, so both refuse alike). */
export function wholeNumberContext(scope: Construct, name: string, limits: WholeNumberLimits): number {
  try {
    return wholeNumberSetting(name, stageContext(scope, name), limits);
  } catch (error) {
    throw new Error(`Context ${(error as Error).message}`);
  }
}

/**
 * Reads and checks the context values; a bad value fails the synth with a message naming it, rather
 * than deploying a stage with no throttling or an alarm topic nobody is subscribed to. Values from
 * the command line arrive as strings, from cdk.json as numbers: both are accepted.
 */
export function deploymentSettings(scope: Construct, stack: { edge: boolean }): DeploymentSettings {
  const context = (name: string): unknown => stageContext(scope, name);
  const number = (name: string, fallback: number, wholeNumber: boolean) => throttleSetting(scope, name, fallback, wholeNumber);
  const wholeNumber = (name: string, limits: WholeNumberLimits) => wholeNumberContext(scope, name, limits);

  const alarmEmail = alarmEmailSetting(scope);

  const reserve = context('reserveConcurrency');
  if (![undefined, '', true, false, 'true', 'false'].includes(reserve as string | boolean | undefined))
    throw new Error(`Context reserveConcurrency must be true or false, not "${String(reserve)}"`);

  const settings: DeploymentSettings = {
    alarmEmail,
    apiRateLimit: number('apiRateLimit', DEFAULT_API_RATE_LIMIT, false),
    apiBurstLimit: number('apiBurstLimit', DEFAULT_API_BURST_LIMIT, true),
    anonymousRateLimit: number('anonymousRateLimit', DEFAULT_ANONYMOUS_RATE_LIMIT, false),
    anonymousBurstLimit: number('anonymousBurstLimit', DEFAULT_ANONYMOUS_BURST_LIMIT, true),
    ...hotRouteSettings(number),
    reloadConcurrency: wholeNumber('reloadConcurrency', RELOAD_CONCURRENCY),
    webhookConcurrency: wholeNumber('webhookConcurrency', WEBHOOK_CONCURRENCY),
    fireConcurrency: wholeNumber('fireConcurrency', FIRE_CONCURRENCY),
    accountConcurrencyLimit: wholeNumber('accountConcurrencyLimit', ACCOUNT_CONCURRENCY_LIMIT),
    reserveConcurrency: reserve !== false && reserve !== 'false',
    edge: stack.edge,
    dueShards: wholeNumber('dueShards', dispatchSettingLimits.dueShards),
    duePageSize: wholeNumber('duePageSize', dispatchSettingLimits.duePageSize),
    runRetentionDays: wholeNumber('runRetentionDays', retentionSettingLimits.runRetentionDays),
    deliveryRetentionDays: wholeNumber('deliveryRetentionDays', retentionSettingLimits.deliveryRetentionDays),
  };
  checkReservations(settings);
  return settings;
}

/** The alarm e-mail, if the stage has one (both stacks subscribe it to their own alarm topic). */
export function alarmEmailSetting(scope: Construct): string | undefined {
  const email = stageContext(scope, 'alarmEmail');
  if (email === undefined || email === '') return undefined;
  if (typeof email !== 'string' || !/^[^\s@]+@[^\s@]+\.[^\s@]+$/.test(email))
    throw new Error(`Context alarmEmail must be an e-mail address, not "${String(email)}"`);
  return email;
}

/** Each hot route's bucket settings (lib/throttling.ts), from context or their defaults. */
function hotRouteSettings(
  number: (name: string, fallback: number, wholeNumber: boolean) => number,
): Record<HotRouteSetting, number> {
  return Object.fromEntries(
    HOT_ROUTES.flatMap((route) => [
      [route.rateSetting, number(route.rateSetting, route.fallback.rateLimit, false)],
      [route.burstSetting, number(route.burstSetting, route.fallback.burstLimit, true)],
    ]),
  ) as Record<HotRouteSetting, number>;
}

/**
 * The concurrency each function reserves (lib/throttling.ts), by route key or handler: none when the
 * stage turns reservations off.
 */
export function reservedConcurrency(settings: DeploymentSettings): Map<string, number> {
  return new Map(reservations(settings).map((reservation) => [reservation.name, reservation.concurrency]));
}

/** How many of the largest reservations the refusal names. */
const NAMED_RESERVATIONS = 4;

/**
 * Lambda refuses, halfway through a deploy, a reservation that would leave fewer than 100 of the
 * account's concurrent executions unreserved (a new account's quota may be 10); the synth says so first,
 * naming the largest reservations and the settings that size them.
 */
function checkReservations(settings: DeploymentSettings): void {
  const all = reservations(settings);
  const reserved = all.reduce((sum, reservation) => sum + reservation.concurrency, 0);
  const unreserved = settings.accountConcurrencyLimit - reserved;
  if (reserved === 0 || unreserved >= MINIMUM_UNRESERVED_CONCURRENCY) return;
  const largest = [...all].sort((a, b) => b.concurrency - a.concurrency).slice(0, NAMED_RESERVATIONS);
  const named = (reservation: Reservation) =>
    `${reservation.name} ${reservation.concurrency}${reservation.setting ? ` (${reservation.setting})` : ''}`;
  const settingsToLower = [...new Set(largest.flatMap((reservation) => (reservation.setting ? [reservation.setting] : [])))];
  throw new Error(
    `The stack reserves ${reserved} concurrent executions in ${all.length} functions (the largest: ${largest.map(named).join(', ')}), ` +
      `which would leave ${unreserved} of the account's ${settings.accountConcurrencyLimit} (context accountConcurrencyLimit) ` +
      `unreserved: Lambda keeps at least ${MINIMUM_UNRESERVED_CONCURRENCY} unreserved and would refuse the deploy. Set ` +
      `accountConcurrencyLimit to the account's quota (Service Quotas, AWS Lambda, Concurrent executions, in the stage's ` +
      `region; ask for more there), lower ${settingsToLower.join(', ')} (each reservation follows its setting), or set ` +
      'reserveConcurrency to false (nothing is then reserved: the consumers stay capped and the routes throttled, but a ' +
      "flood on the API may take the consumers' and the timers' concurrency; docs/operations.md, Route buckets and reserved concurrency).",
  );
}
