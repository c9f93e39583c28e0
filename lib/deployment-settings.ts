import type { Construct } from 'constructs';
import { stageContext } from './stage.ts';
import {
  type DispatchSettings,
  dispatchSettingLimits,
  type WholeNumberLimits,
  wholeNumberSetting,
} from '#functions/core/schedules/dispatch-settings.ts';

/** API Gateway stage throttling when the context sets none: steady requests per second, and the burst above it. */
export const DEFAULT_API_RATE_LIMIT = 200;
export const DEFAULT_API_BURST_LIMIT = 400;
/**
 * Each route that takes no token (the SSO landing, docs, JWKS, health, and the $default route of
 * unmatched paths) has a bucket of its own this size, so a flood on one of them is answered 429 there
 * and never spends what the tenant routes share.
 */
export const DEFAULT_ANONYMOUS_RATE_LIMIT = 50;
export const DEFAULT_ANONYMOUS_BURST_LIMIT = 100;

/**
 * Fire workers that may run at once when the fire queue is busy: reserved for the fire worker (taken
 * from the account's unreserved concurrency) and the most its event source runs. One worker fires
 * about 800 schedules a second and one shard of the due index takes about 500, so the default
 * matches the default 16 shards (docs/schedules.md, section At scale). The bounds are the event
 * source mapping's own for maximum concurrency.
 */
export const FIRE_CONCURRENCY: WholeNumberLimits = { fallback: 10, min: 2, max: 1000 };

/** The operational settings a deployer gives as CDK context (the stage's in cdk.json, or `-c name=value`). */
export interface DeploymentSettings extends DispatchSettings {
  /** Subscribed to the alarm topic when set (SNS sends a confirmation e-mail first). */
  alarmEmail?: string;
  /** Steady-state requests per second the API's default stage accepts before answering 429. */
  apiRateLimit: number;
  /** Requests the stage accepts in a burst above the rate (a whole number). */
  apiBurstLimit: number;
  /** Steady requests per second each anonymous route accepts, in a bucket of its own. */
  anonymousRateLimit: number;
  anonymousBurstLimit: number;
  fireConcurrency: number;
}

/**
 * Reads and checks the context values; a bad value fails the synth with a message naming it, rather
 * than deploying a stage with no throttling or an alarm topic nobody is subscribed to. Values from
 * the command line arrive as strings, from cdk.json as numbers: both are accepted.
 */
export function deploymentSettings(scope: Construct): DeploymentSettings {
  const context = (name: string): unknown => stageContext(scope, name);

  const email = context('alarmEmail');
  let alarmEmail: string | undefined;
  if (email !== undefined && email !== '') {
    if (typeof email !== 'string' || !/^[^\s@]+@[^\s@]+\.[^\s@]+$/.test(email))
      throw new Error(`Context alarmEmail must be an e-mail address, not "${String(email)}"`);
    alarmEmail = email;
  }

  const number = (name: string, fallback: number, wholeNumber: boolean): number => {
    const raw = context(name);
    if (raw === undefined || raw === '') return fallback;
    const value = typeof raw === 'number' ? raw : typeof raw === 'string' ? Number(raw.trim()) : Number.NaN;
    if (!Number.isFinite(value) || value <= 0 || (wholeNumber && !Number.isInteger(value)))
      throw new Error(`Context ${name} must be a positive ${wholeNumber ? 'whole ' : ''}number, not "${String(raw)}"`);
    return value;
  };

  const wholeNumber = (name: string, limits: WholeNumberLimits) => {
    try {
      return wholeNumberSetting(name, context(name), limits);
    } catch (error) {
      throw new Error(`Context ${(error as Error).message}`);
    }
  };

  return {
    alarmEmail,
    apiRateLimit: number('apiRateLimit', DEFAULT_API_RATE_LIMIT, false),
    apiBurstLimit: number('apiBurstLimit', DEFAULT_API_BURST_LIMIT, true),
    anonymousRateLimit: number('anonymousRateLimit', DEFAULT_ANONYMOUS_RATE_LIMIT, false),
    anonymousBurstLimit: number('anonymousBurstLimit', DEFAULT_ANONYMOUS_BURST_LIMIT, true),
    fireConcurrency: wholeNumber('fireConcurrency', FIRE_CONCURRENCY),
    dueShards: wholeNumber('dueShards', dispatchSettingLimits.dueShards),
    duePageSize: wholeNumber('duePageSize', dispatchSettingLimits.duePageSize),
  };
}
