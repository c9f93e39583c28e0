import { Stack, Token } from 'aws-cdk-lib';
import type { Construct } from 'constructs';
import { stageContext, stageName } from './stage.ts';
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

/**
 * Rollout workers at most: each works one rollout, 10 tenants at a time, so the default runs 5
 * rollouts at once (of different templates or clients) and keeps at most 50 applies in flight.
 */
export const ROLLOUT_CONCURRENCY: WholeNumberLimits = { fallback: 5, min: 2, max: 1000 };

/** Each consumer's concurrency setting, by name. */
export const CONSUMER_CONCURRENCY: Record<ConsumerConcurrencySetting, WholeNumberLimits> = {
  reloadConcurrency: RELOAD_CONCURRENCY,
  webhookConcurrency: WEBHOOK_CONCURRENCY,
  fireConcurrency: FIRE_CONCURRENCY,
  rolloutConcurrency: ROLLOUT_CONCURRENCY,
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
  /** Subscribed to both alarm topics, page and ticket, when set (SNS sends a confirmation e-mail first). */
  alarmEmail?: string;
  /** Subscribed to the page topic only, when set (lib/alarm-topic.ts). */
  pageEmail?: string;
  /** The share of the API's requests (percent) answered without a 5xx that the paging burn-rate alarms defend (lib/monitoring.ts). */
  availabilityObjective: number;
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
 * The table's warm throughput in a production stage unless set (`tableWarmReadUnits`, `tableWarmWriteUnits`): what a
 * burst of 100,000 schedules takes at the defaults, 8,000 fires a second (docs/schedules.md, At scale), each fire
 * reading about 2 units and writing 4 (the claim and the run in the table, the due entry moved in gsi1). The writes'
 * total goes to the table and to gsi1 alike: each takes half of the fires' writes, the table besides the reload
 * workers' runs. The least is what a new on-demand table takes at once (more would be no warmer), the most
 * DynamoDB's default table-level quota, past which the deploy would fail: raise the quota (Service Quotas) and this
 * bound together.
 * https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/warm-throughput.html
 */
export const TABLE_WARM_READ_UNITS: WholeNumberLimits = { fallback: 16_000, min: 12_000, max: 40_000 };
export const TABLE_WARM_WRITE_UNITS: WholeNumberLimits = { fallback: 32_000, min: 4_000, max: 40_000 };

/** The table's own settings (lib/service-table.ts, lib/table-backup.ts). */
export interface TableSettings {
  /** The IAM role that administers the table's KMS key, beside the CloudFormation role that deploys it. */
  keyAdminRoleArn?: string;
  /** Read and write units a second the table takes at once (its warm throughput); none: what DynamoDB gives a new table. */
  warmReadUnits?: number;
  warmWriteUnits?: number;
  /** A backup vault of another account or region that each daily backup is copied to. */
  backupCopyVaultArn?: string;
}

const roleArnPattern = /^arn:aws[a-z-]*:iam::(\d{12}):role\/[\w+=,.@/-]+$/;
const backupVaultArnPattern = /^arn:aws[a-z-]*:backup:([a-z0-9-]+):(\d{12}):backup-vault:[A-Za-z0-9_-]{2,50}$/;

/**
 * Reads and checks the table's settings. A production stage that names its account (every one deployed: lib/stage.ts)
 * must name the key's administrator: without one, only the CloudFormation role of the CDK bootstrap could administer
 * the key, and nobody could restore the table or run the admin CLI against it (lib/service-table.ts).
 */
export function tableSettings(scope: Construct, stage: { ephemeral: boolean }): TableSettings {
  const text = (name: string): string | undefined => {
    const value = stageContext(scope, name);
    return value === undefined || value === '' ? undefined : String(value);
  };
  const stack = Stack.of(scope);
  const known = (value: string) => !Token.isUnresolved(value);

  const keyAdminRoleArn = text('keyAdminRoleArn');
  if (keyAdminRoleArn === undefined && !stage.ephemeral && text('account') !== undefined)
    throw new Error(
      `Context keyAdminRoleArn is required for the production stage ${stageName(scope)}: the ARN of the IAM role that ` +
        "administers the table's KMS key (and may restore the table and run the admin CLI), such as " +
        `arn:aws:iam::${text('account')}:role/<name>, under stages.${stageName(scope)} in cdk.json (or -c keyAdminRoleArn=…)`,
    );
  if (keyAdminRoleArn !== undefined) {
    const match = roleArnPattern.exec(keyAdminRoleArn);
    if (!match)
      throw new Error(
        `Context keyAdminRoleArn must be an IAM role ARN (arn:aws:iam::<account>:role/<name>), not "${keyAdminRoleArn}"`,
      );
    if (known(stack.account) && match[1] !== stack.account)
      throw new Error(`Context keyAdminRoleArn is a role of account ${match[1]}, but the stack deploys to ${stack.account}`);
  }

  const backupCopyVaultArn = text('backupCopyVaultArn');
  if (backupCopyVaultArn !== undefined) {
    const match = backupVaultArnPattern.exec(backupCopyVaultArn);
    if (!match)
      throw new Error(
        `Context backupCopyVaultArn must be a backup vault ARN (arn:aws:backup:<region>:<account>:backup-vault:<name>), not "${backupCopyVaultArn}"`,
      );
    if (known(stack.region) && known(stack.account) && match[1] === stack.region && match[2] === stack.account)
      throw new Error(
        `Context backupCopyVaultArn is a vault of the stack's own account and region: a copy there survives the loss of neither; name one of another account or region`,
      );
  }

  // A throwaway stage's table takes what DynamoDB gives a new one, unless it asks for more.
  const warm = (name: string, limits: WholeNumberLimits) =>
    stage.ephemeral && text(name) === undefined ? undefined : wholeNumberContext(scope, name, limits);
  return {
    keyAdminRoleArn,
    warmReadUnits: warm('tableWarmReadUnits', TABLE_WARM_READ_UNITS),
    warmWriteUnits: warm('tableWarmWriteUnits', TABLE_WARM_WRITE_UNITS),
    backupCopyVaultArn,
  };
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
  const pageEmail = pageEmailSetting(scope);

  const reserve = context('reserveConcurrency');
  if (![undefined, '', true, false, 'true', 'false'].includes(reserve as string | boolean | undefined))
    throw new Error(`Context reserveConcurrency must be true or false, not "${String(reserve)}"`);

  const settings: DeploymentSettings = {
    alarmEmail,
    pageEmail,
    availabilityObjective: availabilityObjectiveSetting(scope),
    apiRateLimit: number('apiRateLimit', DEFAULT_API_RATE_LIMIT, false),
    apiBurstLimit: number('apiBurstLimit', DEFAULT_API_BURST_LIMIT, true),
    anonymousRateLimit: number('anonymousRateLimit', DEFAULT_ANONYMOUS_RATE_LIMIT, false),
    anonymousBurstLimit: number('anonymousBurstLimit', DEFAULT_ANONYMOUS_BURST_LIMIT, true),
    ...hotRouteSettings(number),
    reloadConcurrency: wholeNumber('reloadConcurrency', RELOAD_CONCURRENCY),
    webhookConcurrency: wholeNumber('webhookConcurrency', WEBHOOK_CONCURRENCY),
    fireConcurrency: wholeNumber('fireConcurrency', FIRE_CONCURRENCY),
    rolloutConcurrency: wholeNumber('rolloutConcurrency', ROLLOUT_CONCURRENCY),
    accountConcurrencyLimit: wholeNumber('accountConcurrencyLimit', ACCOUNT_CONCURRENCY_LIMIT),
    reserveConcurrency: reserve !== false && reserve !== 'false',
    edge: stack.edge,
    dueShards: wholeNumber('dueShards', dispatchSettingLimits.dueShards),
    duePageSize: wholeNumber('duePageSize', dispatchSettingLimits.duePageSize),
    runRetentionDays: wholeNumber('runRetentionDays', retentionSettingLimits.runRetentionDays),
    deliveryRetentionDays: wholeNumber('deliveryRetentionDays', retentionSettingLimits.deliveryRetentionDays),
    auditRetentionDays: wholeNumber('auditRetentionDays', retentionSettingLimits.auditRetentionDays),
  };
  checkReservations(settings);
  return settings;
}

/** The alarm e-mail, if the stage has one (both stacks subscribe it to their own alarm topics). */
export const alarmEmailSetting = (scope: Construct) => emailSetting(scope, 'alarmEmail');
/** The e-mail that hears only what pages, if the stage has one (both stacks subscribe it to their own page topic). */
export const pageEmailSetting = (scope: Construct) => emailSetting(scope, 'pageEmail');

function emailSetting(scope: Construct, name: string): string | undefined {
  const email = stageContext(scope, name);
  if (email === undefined || email === '') return undefined;
  if (typeof email !== 'string' || !/^[^\s@]+@[^\s@]+\.[^\s@]+$/.test(email))
    throw new Error(`Context ${name} must be an e-mail address, not "${String(email)}"`);
  return email;
}

/**
 * The availability objective's bounds (percent): under 95, the fastest burn rate's threshold (14.4 times the
 * error budget) passes 72% and the fast alarm stops meaning anything (under 93.1 it could never fire); above
 * 99.99, the budget of a month is a handful of requests at the reference load.
 */
export const AVAILABILITY_OBJECTIVE = { fallback: 99.9, min: 95, max: 99.99 } as const;

/** The availability objective from context: a percentage within AVAILABILITY_OBJECTIVE, a string or a number. */
function availabilityObjectiveSetting(scope: Construct): number {
  const raw = stageContext(scope, 'availabilityObjective');
  if (raw === undefined || raw === '') return AVAILABILITY_OBJECTIVE.fallback;
  const value = typeof raw === 'number' ? raw : typeof raw === 'string' ? Number(raw.trim()) : Number.NaN;
  const { min, max } = AVAILABILITY_OBJECTIVE;
  if (!Number.isFinite(value) || value < min || value > max)
    throw new Error(
      `Context availabilityObjective must be a percentage from ${min} to ${max} (the share of the API's requests answered ` +
        `without a 5xx), not "${String(raw)}"`,
    );
  return value;
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
