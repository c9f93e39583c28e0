import { PriceClass } from 'aws-cdk-lib/aws-cloudfront';
import type { Construct } from 'constructs';
import type { WholeNumberLimits } from '#functions/core/environment-settings.ts';
import { wholeNumberContext } from './deployment-settings.ts';
import { stageContext } from './stage.ts';
import type { RouteBucket } from './throttling.ts';
import { routeKey, routes, takesNoToken, unmatchedRoute } from '#functions/routes.ts';

/**
 * The WAF's rate-based rules count requests over this window: the shortest WAF offers, so a flood is
 * judged on its last minute, not diluted over five.
 */
export const EDGE_RATE_WINDOW_SECONDS = 60;
/** Rate-based rules' limits and windows: https://docs.aws.amazon.com/waf/latest/developerguide/waf-rule-statement-type-rate-based-high-level-settings.html */
/**
 * Requests one bearer token (however spelled) may send per window before the WAF answers it 429:
 * 6,000 a minute is 100 a second, half of a route's default bucket (apiRateLimit), so one caller
 * cannot empty a route's bucket for the others. WAF takes 10 to 2,000,000,000.
 */
export const CALLER_RATE_LIMIT: WholeNumberLimits = { fallback: 6000, min: 10, max: 2_000_000_000 };
/**
 * Requests one address may send per window to the routes without a token (the SSO landing, the docs,
 * the JWKS, health), whatever headers it adds: 1,500 a minute is 25 a second, half of one anonymous
 * route's bucket, so one address cannot empty the landing's bucket that every tenant's sign-in shares.
 */
export const ANONYMOUS_CALLER_RATE_LIMIT: WholeNumberLimits = { fallback: 1500, min: 10, max: 2_000_000_000 };
/**
 * Requests one address may send per window whatever it sends: 6,000 a minute is 100 a second, below
 * every route's bucket, yet room for many agents and backends behind one NAT; and a bound on a caller
 * that sends a new made-up token with every request (each would be a new caller to the per-caller rule).
 */
export const ADDRESS_RATE_LIMIT: WholeNumberLimits = { fallback: 6000, min: 10, max: 2_000_000_000 };
/** Days the WAF log (blocked and counted requests) is kept. */
export const WAF_LOG_RETENTION_DAYS = 30;
/** CloudWatch Logs' retention values of up to a year, which the WAF log may take. */
const RETENTION_DAYS = [1, 3, 5, 7, 14, 30, 60, 90, 120, 150, 180, 365];
/** Days between rotations of the secret header CloudFront sends the origin. */
export const ORIGIN_SECRET_ROTATION_DAYS: WholeNumberLimits = { fallback: 30, min: 1, max: 365 };

/** CloudFront's price classes by their setting: where the distribution is served from (docs/operations.md). */
export const EDGE_PRICE_CLASSES = {
  '100': PriceClass.PRICE_CLASS_100,
  '200': PriceClass.PRICE_CLASS_200,
  All: PriceClass.PRICE_CLASS_ALL,
};
/** Edge locations of North America, Europe and Israel: the cheapest; callers elsewhere reach the nearest of them. */
export const DEFAULT_EDGE_PRICE_CLASS = '100';

/**
 * Who serves the tenant domains' other paths (the BI front end), which this service shares with it
 * (it owns `/auth/*` and `/.well-known/*` there). A host name belongs to one distribution in all of
 * CloudFront, so the edge must know, and there is no safe default:
 * - `{ origin }`: this stack's tenant distribution serves `*.<tenantBaseDomain>`, sending the two paths
 *   to the API and everything else to the front end at that origin;
 * - `{ distributionId }`: the front end's own distribution keeps the tenant domains; its operators add
 *   the two behaviours (docs/operations.md, Tenant domains), and the origin secret's rotation updates
 *   that distribution too;
 * - `none`: no front end on these domains; the tenant distribution sends every path to the API.
 */
export type FrontEnd = { origin: string } | { distributionId: string } | 'none';

/** What the edge (CloudFront and the WAF web ACL in front of the API) takes from context. */
export interface EdgeSettings {
  /** Requests per `EDGE_RATE_WINDOW_SECONDS` one bearer token may send. */
  callerRateLimit: number;
  /** Requests per window one address may send to the routes without a token. */
  anonymousCallerRateLimit: number;
  /** Requests per window one address may send, whatever it sends. */
  addressRateLimit: number;
  /** Whether the managed rule groups only count what they match (the default) or block it. */
  managedRules: 'count' | 'block';
  wafLogRetentionDays: number;
  originSecretRotationDays: number;
  priceClass: PriceClass;
  frontEnd: FrontEnd;
}

const hostPattern = /^(?=.{1,253}$)([a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?\.)+[a-z]{2,63}$/;
const distributionIdPattern = /^E[A-Z0-9]{6,20}$/;

/** `frontEnd` from context: an object in cdk.json, or `none`, `origin:<host>`, `distribution:<id>` on the command line. */
export function frontEndSetting(raw: unknown): FrontEnd | undefined {
  if (raw === undefined || raw === '') return undefined;
  const problem = () =>
    new Error(
      `Context frontEnd must be "none", {"origin": "<host of the BI front end's origin>"} or {"distributionId": "<the front end's CloudFront distribution>"} ` +
        `(on the command line: none, origin:<host>, distribution:<id>), not ${JSON.stringify(raw)}`,
    );
  let value = raw;
  if (typeof value === 'string' && value !== 'none') {
    const [kind, ...rest] = value.split(':');
    const argument = rest.join(':');
    if (kind === 'origin') value = { origin: argument };
    else if (kind === 'distribution') value = { distributionId: argument };
    else throw problem();
  }
  if (value === 'none') return 'none';
  if (typeof value !== 'object' || value === null || Array.isArray(value) || Object.keys(value).length !== 1) throw problem();
  const { origin, distributionId } = value as { origin?: unknown; distributionId?: unknown };
  if (typeof origin === 'string' && hostPattern.test(origin)) return { origin };
  if (typeof distributionId === 'string' && distributionIdPattern.test(distributionId)) return { distributionId };
  throw problem();
}

/** Reads and checks the edge's settings, like deploymentSettings: a bad value fails the synth, naming it. */
export function edgeSettings(scope: Construct): EdgeSettings {
  const raw = stageContext(scope, 'edgePriceClass');
  const priceClass = (raw === undefined || raw === '' ? DEFAULT_EDGE_PRICE_CLASS : String(raw)).replace(/^PriceClass_/, '');
  if (!Object.hasOwn(EDGE_PRICE_CLASSES, priceClass))
    throw new Error(`Context edgePriceClass must be one of ${Object.keys(EDGE_PRICE_CLASSES).join(', ')}, not "${priceClass}"`);
  const managedRules = stageContext(scope, 'managedRules') ?? 'count';
  if (managedRules !== 'count' && managedRules !== 'block')
    throw new Error(`Context managedRules must be count or block, not "${String(managedRules)}"`);
  const retention = wholeNumberContext(scope, 'wafLogRetentionDays', { fallback: WAF_LOG_RETENTION_DAYS, min: 1, max: 365 });
  if (!RETENTION_DAYS.includes(retention))
    throw new Error(
      `Context wafLogRetentionDays must be one of ${RETENTION_DAYS.join(', ')} (CloudWatch Logs' values), not ${retention}`,
    );
  const frontEnd = frontEndSetting(stageContext(scope, 'frontEnd'));
  if (frontEnd === undefined)
    throw new Error(
      'The edge needs frontEnd: who serves the tenant domains besides this API (a host name belongs to one CloudFront ' +
        'distribution). Set it to {"origin": "<the BI front end\'s origin host>"} to have this stack serve the tenant ' +
        'domains in front of it, {"distributionId": "<id>"} to keep the front end\'s own distribution (docs/operations.md, ' +
        'Tenant domains, says what to add to it), or "none" when no front end is served there.',
    );
  return {
    callerRateLimit: wholeNumberContext(scope, 'callerRateLimit', CALLER_RATE_LIMIT),
    anonymousCallerRateLimit: wholeNumberContext(scope, 'anonymousCallerRateLimit', ANONYMOUS_CALLER_RATE_LIMIT),
    addressRateLimit: wholeNumberContext(scope, 'addressRateLimit', ADDRESS_RATE_LIMIT),
    managedRules,
    wafLogRetentionDays: retention,
    originSecretRotationDays: wholeNumberContext(scope, 'originSecretRotationDays', ORIGIN_SECRET_ROTATION_DAYS),
    priceClass: EDGE_PRICE_CLASSES[priceClass as keyof typeof EDGE_PRICE_CLASSES],
    frontEnd,
  };
}

/**
 * Where one address could empty a route's bucket for everyone else: each route's bucket must take more a
 * second than one address may send it through the edge. On a route without a token, that is the lesser
 * of `anonymousCallerRateLimit` and `addressRateLimit`; on a route with one, `addressRateLimit`, however
 * many tokens the address holds. Not `$default`: it answers only 404 and 405 (an unmatched path, a wrong
 * method), which no caller depends on, so an address emptying its bucket harms nobody. Empty when every
 * bucket is above its share.
 */
export function edgeLimitProblems(
  settings: Pick<EdgeSettings, 'anonymousCallerRateLimit' | 'addressRateLimit'>,
  buckets: Record<string, RouteBucket>,
): string[] {
  const anonymous = new Set(routes.filter(takesNoToken).map(routeKey));
  return Object.entries(buckets).flatMap(([key, bucket]) => {
    if (key === unmatchedRoute.routeKey) return [];
    const [setting, perWindow] = anonymous.has(key)
      ? settings.anonymousCallerRateLimit < settings.addressRateLimit
        ? ['anonymousCallerRateLimit', settings.anonymousCallerRateLimit]
        : ['addressRateLimit', settings.addressRateLimit]
      : ['addressRateLimit', settings.addressRateLimit];
    const perSecond = perWindow / EDGE_RATE_WINDOW_SECONDS;
    return perSecond < bucket.rateLimit
      ? []
      : [
          `${key}: one address may send it ${perSecond} a second (${setting} ${perWindow} in ${EDGE_RATE_WINDOW_SECONDS} s), ` +
            `not less than its bucket's ${bucket.rateLimit} (${bucket.settings[0]}): lower ${setting} or raise ${bucket.settings[0]}`,
        ];
  });
}
