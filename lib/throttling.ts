/**
 * What each route may take: its API Gateway bucket, and the Lambda concurrency reserved for it, for
 * the queue consumers and for the timers (docs/operations.md, Route buckets and reserved concurrency).
 *
 * API Gateway keeps a token bucket per route: the stage's default route throttling (DefaultRouteSettings)
 * is the size of each route's own bucket, not a pool the routes share. AWS, for HTTP APIs: "You can set
 * route-level throttling to override the account-level request throttling limits for a specific stage or
 * for individual routes in your API" (https://docs.aws.amazon.com/apigateway/latest/developerguide/http-api-throttling.html);
 * for REST APIs, plainer: "Per-API, per-stage throttling limits are applied at the API method level for a
 * stage" (https://docs.aws.amazon.com/apigateway/latest/developerguide/api-gateway-request-throttling.html).
 * The only buckets routes share are the account's, per region, across all its APIs.
 */
import { queueConsumers, routeKey, routes, takesNoToken, timedFunctions, unmatchedRoute } from '#functions/routes.ts';
import type { ConsumerConcurrencySetting } from '#functions/routes.ts';

/** A route's token bucket: steady requests a second, and the burst above that rate (a whole number). */
export interface Bucket {
  rateLimit: number;
  burstLimit: number;
}

/**
 * API Gateway's throttle quota per account and region, shared by every API of the account (AWS's default:
 * "10,000 requests per second (RPS) with an additional burst capacity provided by the token bucket
 * algorithm, using a maximum bucket capacity of 5,000 requests",
 * https://docs.aws.amazon.com/apigateway/latest/developerguide/limits.html). No route's bucket can go
 * past it ("The default route throttling limits can't exceed account-level rate limits"), so the settings
 * below take no more.
 */
export const ACCOUNT_API_BUCKET: Bucket = { rateLimit: 10_000, burstLimit: 5_000 };

/**
 * The classes of routes, by who calls them and so what a flood of each does:
 * - `anonymous`: the routes without a token (health, OpenAPI document, docs and their assets, JWKS,
 *   `/auth/session`) and `$default` (unmatched paths): anyone on the internet;
 * - `sign-in`: `POST /tenant/login` (a tenant backend asks for a user's login URL) and the SSO landing it
 *   leads to, `GET /auth/api/{token}` (that user's browser; no token but the login token in the path);
 * - `agent`: the agents' heartbeat and run reports;
 * - `integrator`: every other route with a client or tenant token (integrators, tenant backends).
 */
export type RouteClass = 'anonymous' | 'sign-in' | 'agent' | 'integrator';

/**
 * The hot routes, each with a bucket of its own sized for 10 times the reference load of the cost model
 * (docs/operations.md, Cost and storage: 1,000 tenants, one agent each beating every 48 to 72 s; 5 hourly
 * schedules per tenant, 2 flows each, so 240,000 runs a day, each reported twice; 100 other requests per
 * tenant a day). Every bucket holds two seconds of its rate, as the stage's default does.
 *
 * - Heartbeat: 10 × 1,000 agents = 10,000, each beating at most every 48 s (the random interval the
 *   heartbeat's answer gives spreads a fleet started at once over the minute): 10,000 / 48 = 208 a
 *   second. Rate 250, burst 500.
 * - Run reports: schedules bunch on the hour, so at 10 times the load 10 × 5,000 = 50,000 schedules fire
 *   at :00 and start 100,000 runs at once. The reload workers record them at about 1,000 a second
 *   (reloadConcurrency 50 × 20 loads a second), so they reach the agents' lists over 100 s, and each agent
 *   takes its own at its next beat (within 48 to 72 s): the first reports ("running") come at most as fast
 *   as they are recorded, 1,000 a second; the final reports of flows shorter than that window land in it
 *   too, 1,000 a second more. Rate 2,000, burst 4,000 (under the account's 5,000).
 * - Login: say all of a tenant's 100 other requests a day were logins, and all came in one hour (a
 *   working day's first, every tenant in one time zone): 10 × 1,000 × 100 / 3,600 s = 278 a second. Rate
 *   300, burst 600.
 * - SSO landing: one per login (the user's browser follows the login URL), so the same: rate 300, burst 600.
 */
export const HOT_ROUTES = [
  {
    key: 'POST /agent/heartbeat',
    routeClass: 'agent',
    rateSetting: 'heartbeatRateLimit',
    burstSetting: 'heartbeatBurstLimit',
    fallback: { rateLimit: 250, burstLimit: 500 },
  },
  {
    key: 'POST /agent/runs/{id}',
    routeClass: 'agent',
    rateSetting: 'runReportRateLimit',
    burstSetting: 'runReportBurstLimit',
    fallback: { rateLimit: 2000, burstLimit: 4000 },
  },
  {
    key: 'POST /tenant/login',
    routeClass: 'sign-in',
    rateSetting: 'loginRateLimit',
    burstSetting: 'loginBurstLimit',
    fallback: { rateLimit: 300, burstLimit: 600 },
  },
  {
    key: 'GET /auth/api/{token}',
    routeClass: 'sign-in',
    rateSetting: 'landingRateLimit',
    burstSetting: 'landingBurstLimit',
    fallback: { rateLimit: 300, burstLimit: 600 },
  },
] as const satisfies readonly {
  key: string;
  routeClass: RouteClass;
  rateSetting: string;
  burstSetting: string;
  fallback: Bucket;
}[];

export type HotRouteSetting = (typeof HOT_ROUTES)[number]['rateSetting' | 'burstSetting'];

/** The settings that size the buckets (deployment-settings.ts reads and checks them from context). */
export interface ThrottleSettings extends Record<HotRouteSetting, number> {
  /** Each route with a token that has no bucket setting of its own (the stage's DefaultRouteSettings). */
  apiRateLimit: number;
  apiBurstLimit: number;
  /** Each `anonymous` route, and `$default`. */
  anonymousRateLimit: number;
  anonymousBurstLimit: number;
}

/** A route's bucket, its class, and the context settings that size it. */
export interface RouteBucket extends Bucket {
  routeClass: RouteClass;
  settings: readonly [rate: string, burst: string];
}

/** The key of every route of the route table, and `$default`. */
export const routeKeys = (): string[] => [...routes.map(routeKey), unmatchedRoute.routeKey];

/** The class of a route key (`$default` included). */
export function routeClassOf(key: string): RouteClass {
  const hot = HOT_ROUTES.find((route) => route.key === key);
  if (hot) return hot.routeClass;
  if (key === unmatchedRoute.routeKey) return 'anonymous';
  const route = routes.find((candidate) => routeKey(candidate) === key);
  if (!route) throw new Error(`No route ${key} in the route table`);
  if (takesNoToken(route)) return 'anonymous';
  return route.auth.includes('agent') ? 'agent' : 'integrator';
}

/**
 * Every route key's bucket, `$default` included: the hot routes' own, each anonymous route's
 * (`anonymousRateLimit`), and the stage's default for every other route with a token (`apiRateLimit`).
 * ServiceApi writes the stage from it; each is a bucket of its own.
 */
export function routeBuckets(settings: ThrottleSettings): Record<string, RouteBucket> {
  const keys = routeKeys();
  for (const hot of HOT_ROUTES) if (!keys.includes(hot.key)) throw new Error(`Hot route ${hot.key} is not in the route table`);
  return Object.fromEntries(
    keys.map((key): [string, RouteBucket] => {
      const routeClass = routeClassOf(key);
      const hot = HOT_ROUTES.find((route) => route.key === key);
      const [rate, burst] = hot
        ? ([hot.rateSetting, hot.burstSetting] as const)
        : routeClass === 'anonymous'
          ? (['anonymousRateLimit', 'anonymousBurstLimit'] as const)
          : (['apiRateLimit', 'apiBurstLimit'] as const);
      return [key, { rateLimit: settings[rate], burstLimit: settings[burst], routeClass, settings: [rate, burst] }];
    }),
  );
}

/** Whether a route's bucket is the stage's default (`apiRateLimit`), which DefaultRouteSettings states once. */
export const isDefaultBucket = (bucket: RouteBucket) => bucket.settings[0] === 'apiRateLimit';

/**
 * How long a route's function runs, for its reservation: bench/results.md finds every read route at most
 * 3 levels of DynamoDB requests, the token lookup's included (section Read routes against their floor),
 * and the hot routes are as shallow; at 10 ms a level on DynamoDB (the burst model's assumption,
 * docs/schedules.md, At scale) and 20 ms of Lambda and code, about 50 ms. Twice that, for the p99 and
 * for instances warming up: 100 ms. So a reservation of rate × 0.1 holds twice the bucket's rate at the
 * expected 50 ms: the burst (two seconds of the rate) drains in a second without a throttle.
 */
export const ROUTE_DURATION_MS = 100;

/** Executions reserved for a route of this rate: rate × ROUTE_DURATION_MS, at least 1. */
export const routeReservation = (rateLimit: number) => Math.max(1, Math.ceil((rateLimit * ROUTE_DURATION_MS) / 1000));

/**
 * A timer runs every minute for at most its time-out (60 s): a run still finishing when the next starts
 * makes two at once, never more.
 */
export const timerReservation = (timed: (typeof timedFunctions)[number]) =>
  Math.ceil(timed.timeoutSeconds / (timed.everyMinutes * 60)) + 1;

/** The classes that reserve concurrency: each of their functions has its own, which also caps it. */
export const RESERVING_CLASSES: readonly RouteClass[] = ['anonymous', 'sign-in', 'agent'];

export interface ConcurrencySettings extends ThrottleSettings, Record<ConsumerConcurrencySetting, number> {
  reserveConcurrency: boolean;
  /** The edge is on, and with it the API's origin authorizer (lib/origin-secret.ts). */
  edge: boolean;
}

/**
 * The origin authorizer's executions (with the edge). API Gateway keeps its answer five minutes per
 * header value, so through the edge it runs a few times an hour; what makes it run is a caller going
 * around the edge with a new made-up value each time, which this caps (each run takes a few
 * milliseconds and reads nothing: the accepted values are cached), so such a flood cannot take the
 * unreserved executions the integrator routes share.
 */
export const ORIGIN_AUTHORIZER_RESERVATION = 10;
export const ORIGIN_AUTHORIZER = 'origin-authorizer';

/** One function's reserved concurrency, and the setting that sizes it. */
export interface Reservation {
  /** A route key, or a consumer's or timer's handler. */
  name: string;
  kind: 'route' | 'consumer' | 'timer' | 'authorizer';
  /** What it belongs to: a route class, the consumers, the timers. */
  group: RouteClass | 'consumers' | 'timers' | 'edge';
  concurrency: number;
  /** The context setting that sizes it (none for the timers: fixed). */
  setting?: string;
}

/**
 * Every reservation of the stack, none when the stage turns them off (`reserveConcurrency` false). A
 * reservation both guarantees and caps: nothing else can take those executions, and the function never
 * runs more. Reserved: each function of the anonymous, sign-in and agent routes (from its bucket), each
 * queue consumer (its cap, so its event source never runs more batches than it may) and each timer.
 * Not the integrator routes: about 70 functions at 20 each would take more than most accounts have;
 * they share the unreserved rest (docs/operations.md says what a flood of each class does).
 */
export function reservations(settings: ConcurrencySettings): Reservation[] {
  if (!settings.reserveConcurrency) return [];
  const routeReservations = Object.entries(routeBuckets(settings))
    .filter(([, bucket]) => RESERVING_CLASSES.includes(bucket.routeClass))
    .map(([key, bucket]): Reservation => ({
      name: key,
      kind: 'route',
      group: bucket.routeClass,
      concurrency: routeReservation(bucket.rateLimit),
      setting: bucket.settings[0],
    }));
  const consumerReservations = queueConsumers.map((consumer): Reservation => ({
    name: consumer.handler,
    kind: 'consumer',
    group: 'consumers',
    concurrency: settings[consumer.concurrencySetting],
    setting: consumer.concurrencySetting,
  }));
  const timerReservations = timedFunctions.map((timed): Reservation => ({
    name: timed.handler,
    kind: 'timer',
    group: 'timers',
    concurrency: timerReservation(timed),
  }));
  const authorizerReservations: Reservation[] = settings.edge
    ? [{ name: ORIGIN_AUTHORIZER, kind: 'authorizer', group: 'edge', concurrency: ORIGIN_AUTHORIZER_RESERVATION }]
    : [];
  return [...routeReservations, ...consumerReservations, ...timerReservations, ...authorizerReservations];
}

/** The concurrency reserved for one function by name (route key or handler), if any. */
export function reservationOf(settings: ConcurrencySettings, name: string): number | undefined {
  return reservations(settings).find((reservation) => reservation.name === name)?.concurrency;
}
