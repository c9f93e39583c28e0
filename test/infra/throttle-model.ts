/**
 * A model of what stands between a caller and the functions, for the throttling tests, following AWS's
 * documented semantics (docs/operations.md, Route buckets and reserved concurrency):
 *
 * 1. optionally the edge's WAF rate-based rules (waf-model.ts, read from the synthesized web ACL);
 * 2. API Gateway's token buckets: ONE PER ROUTE KEY, its `RouteSettings` entry, else a bucket of the size
 *    of `DefaultRouteSettings` of its own (the stage's "default route throttling" is a default for each
 *    route, not a pool the routes share), then the account's regional bucket (10,000 a second, bursts of
 *    5,000 by default), which every request of every API of the account also takes from. AWS applies them
 *    in that order (per-route, then account-level), so a request refused by its route's bucket spends
 *    nothing of the account's;
 * 3. optionally Lambda's concurrency: a function with reserved concurrency runs at most that many at once,
 *    and nothing else can take them; the others share what the account has left.
 *
 * Time goes by a millisecond at a time.
 */
import type { Template } from 'aws-cdk-lib/assertions';
import { queueConsumers, routeKey, routes, timedFunctions, unmatchedRoute } from '#functions/routes.ts';
import { consumerIdOf, functionIdOf, pascalCase } from '#lib/construct-ids.ts';
import { type Firewall, FirewallState } from './waf-model.ts';

/** One bucket's settings, as the stage's CloudFormation spells them. */
export interface Limits {
  ThrottlingRateLimit: number;
  ThrottlingBurstLimit: number;
}

/** The throttling of the synthesized `$default` stage: every route's default, and the routes' own. */
export interface StageSettings {
  DefaultRouteSettings: Limits;
  RouteSettings?: Record<string, Limits>;
}

/** API Gateway's throttle quota per account and region, shared by all its APIs: AWS's defaults. */
export const ACCOUNT_LIMITS: Limits = { ThrottlingRateLimit: 10_000, ThrottlingBurstLimit: 5_000 };

/**
 * API Gateway's token bucket: `burst` tokens at most, refilled at `rate` a second; it starts full. The
 * refill is counted when a token is asked for, up to the end of that millisecond: the same as adding a
 * millisecond's worth at each millisecond (the bucket is capped either way), without touching every
 * route's bucket every millisecond.
 */
export class TokenBucket {
  private tokens: number;
  /** Milliseconds whose refill is counted. */
  private filledMs = 0;
  constructor(private readonly limits: Limits) {
    this.tokens = limits.ThrottlingBurstLimit;
  }
  take(ms: number): boolean {
    const elapsed = ms + 1 - this.filledMs;
    if (elapsed > 0) {
      this.tokens = Math.min(this.limits.ThrottlingBurstLimit, this.tokens + (this.limits.ThrottlingRateLimit * elapsed) / 1000);
      this.filledMs = ms + 1;
    }
    if (this.tokens < 1) return false;
    this.tokens -= 1;
    return true;
  }
}

/** A stream of requests to one route. */
export interface Requests {
  /** What the outcome is counted under (several streams may share one). */
  name: string;
  /** The route key API Gateway matched (`$default` for a path no route has). */
  key: string;
  perSecond: number;
  /** The raw Authorization value sent (none if absent); a function gives the n-th request's (made-up tokens). */
  caller?: string | ((n: number) => string);
  /** The viewer's address (default: one address per stream name); a function gives the n-th request's. */
  address?: string | ((n: number) => string);
  /** The request path (default: the route key's path, parameters filled in). */
  path?: string;
}

/** Invocations that do not come through the API: the queue consumers' batches, the timers' ticks. */
export interface Invocations {
  name: string;
  /** The function's name in `LambdaConcurrency.reserved`. */
  function: string;
  perSecond: number;
  durationMs: number;
}

/**
 * Lambda's concurrency: each function in `reserved` has that many executions of its own (and no more);
 * every other function shares `accountLimit` minus all reservations. Route functions are named by their
 * route key; each request runs `routeDurationMs`.
 */
export interface LambdaConcurrency {
  accountLimit: number;
  reserved: Record<string, number>;
  routeDurationMs: number;
  invocations?: readonly Invocations[];
}

/** What became of one name's requests (from `countFrom` on). */
export interface Outcome {
  sent: number;
  /** Ran in a function. */
  served: number;
  /** Refused by a WAF rule. */
  blockedAtEdge: number;
  /** 429 from the route's bucket. */
  throttledByRoute: number;
  /** 429 from the account's bucket. */
  throttledByAccount: number;
  /** Refused by Lambda: no concurrency left for the function. */
  throttledByLambda: number;
}

export interface Simulation {
  outcomes: Map<string, Outcome>;
  /** Per name, how many of its requests each WAF rule blocked. */
  blockedByRule: Map<string, Map<string, number>>;
  /** The most executions each concurrency pool held at once (`(unreserved)`, or a reserved function's name). */
  peakConcurrency: Map<string, number>;
}

export const UNRESERVED = '(unreserved)';

/** A path that API Gateway matches to the route key: each `{parameter}` filled in. */
export const pathOf = (key: string) => (key.split(' ')[1] ?? '/').replace(/\{[^}]+\}/g, 'p1');

const blank = (): Outcome => ({
  sent: 0,
  served: 0,
  blockedAtEdge: 0,
  throttledByRoute: 0,
  throttledByAccount: 0,
  throttledByLambda: 0,
});

/** Lambda's pools of concurrency, and the executions that end at each millisecond. */
class Concurrency {
  private readonly pools = new Map<string, { size: number; inUse: number; peak: number }>();
  private readonly ending = new Map<number, Map<string, number>>();

  constructor(private readonly model: LambdaConcurrency) {
    const reserved = Object.values(model.reserved).reduce((sum, value) => sum + value, 0);
    for (const [name, size] of Object.entries(model.reserved)) this.pools.set(name, { size, inUse: 0, peak: 0 });
    this.pools.set(UNRESERVED, { size: model.accountLimit - reserved, inUse: 0, peak: 0 });
  }

  release(ms: number) {
    for (const [pool, count] of this.ending.get(ms) ?? []) (this.pools.get(pool) as { inUse: number }).inUse -= count;
    this.ending.delete(ms);
  }

  /** Starts an execution of `fn` at `ms` for `durationMs`; false when Lambda throttles it. */
  start(fn: string, ms: number, durationMs: number): boolean {
    const name = this.pools.has(fn) ? fn : UNRESERVED;
    const pool = this.pools.get(name) as { size: number; inUse: number; peak: number };
    if (pool.inUse >= pool.size) return false;
    pool.inUse += 1;
    pool.peak = Math.max(pool.peak, pool.inUse);
    const end = ms + Math.max(1, Math.round(durationMs));
    const ends = this.ending.get(end) ?? new Map<string, number>();
    ends.set(name, (ends.get(name) ?? 0) + 1);
    this.ending.set(end, ends);
    return true;
  }

  peaks(): Map<string, number> {
    return new Map([...this.pools].map(([name, pool]) => [name, pool.peak]));
  }
}

/**
 * Runs `seconds` of traffic through the firewall (if any), the stage's and the account's buckets and
 * Lambda's concurrency (if given); counts what became of each name's requests from the second
 * `countFrom` on. Each stream sends evenly, its n-th request at n / perSecond seconds; within a
 * millisecond requests and invocations are taken in the order they arrive, so whoever asks first gets
 * the executions that just ended.
 */
export function simulate(
  stage: StageSettings,
  requests: readonly Requests[],
  options: {
    seconds?: number;
    countFrom?: number;
    firewall?: Firewall;
    account?: Limits;
    lambda?: LambdaConcurrency;
  } = {},
): Simulation {
  const { seconds = 60, countFrom = 0 } = options;
  const account = new TokenBucket(options.account ?? ACCOUNT_LIMITS);
  const routes = new Map<string, TokenBucket>();
  const bucketOf = (key: string) => {
    let bucket = routes.get(key);
    if (!bucket) {
      bucket = new TokenBucket(stage.RouteSettings?.[key] ?? stage.DefaultRouteSettings);
      routes.set(key, bucket);
    }
    return bucket;
  };
  const firewall = options.firewall ? new FirewallState(options.firewall) : undefined;
  const lambda = options.lambda ? new Concurrency(options.lambda) : undefined;
  const routeDurationMs = options.lambda?.routeDurationMs ?? 0;

  const outcomes = new Map<string, Outcome>();
  const blockedByRule = new Map<string, Map<string, number>>();
  const streams = [
    ...requests.map((stream) => ({ request: stream, invocation: undefined, interval: 1000 / stream.perSecond })),
    ...(options.lambda?.invocations ?? []).map((stream) => ({
      request: undefined,
      invocation: stream,
      interval: 1000 / stream.perSecond,
    })),
  ];
  for (const { request, invocation } of streams) outcomes.set((request ?? invocation)?.name as string, blank());
  const sent = streams.map(() => 0);
  const events: { at: number; index: number; n: number }[] = [];

  for (let ms = 0; ms < seconds * 1000; ms++) {
    const second = Math.floor(ms / 1000);
    const counted = second >= countFrom;
    lambda?.release(ms);

    events.length = 0;
    for (const [index, stream] of streams.entries())
      for (let at = ((sent[index] ?? 0) + 1) * stream.interval; at < ms + 1; at += stream.interval) {
        sent[index] = (sent[index] ?? 0) + 1;
        events.push({ at, index, n: sent[index] ?? 0 });
      }
    events.sort((a, b) => a.at - b.at || a.index - b.index);

    for (const { index, n } of events) {
      const { request: stream, invocation } = streams[index] as (typeof streams)[number];
      let result: keyof Outcome;
      let name: string;
      if (invocation) {
        name = invocation.name;
        result = (lambda?.start(invocation.function, ms, invocation.durationMs) ?? true) ? 'served' : 'throttledByLambda';
      } else {
        const requestStream = stream as Requests;
        name = requestStream.name;
        const caller = typeof requestStream.caller === 'function' ? requestStream.caller(n) : requestStream.caller;
        const address =
          typeof requestStream.address === 'function'
            ? requestStream.address(n)
            : (requestStream.address ?? `address of ${requestStream.name}`);
        const rule = firewall?.evaluate({ caller, address, path: requestStream.path ?? pathOf(requestStream.key) }, second);
        if (rule !== undefined) {
          result = 'blockedAtEdge';
          if (counted) {
            const rules = blockedByRule.get(name) ?? new Map<string, number>();
            rules.set(rule, (rules.get(rule) ?? 0) + 1);
            blockedByRule.set(name, rules);
          }
        } else if (!bucketOf(requestStream.key).take(ms)) result = 'throttledByRoute';
        else if (!account.take(ms)) result = 'throttledByAccount';
        else if (lambda && !lambda.start(requestStream.key, ms, routeDurationMs)) result = 'throttledByLambda';
        else result = 'served';
      }
      if (!counted) continue;
      const outcome = outcomes.get(name) as Outcome;
      outcome.sent += 1;
      outcome[result] += 1;
    }
    if (ms % 1000 === 999) firewall?.tick(second);
  }
  return { outcomes, blockedByRule, peakConcurrency: lambda?.peaks() ?? new Map() };
}

/** The outcomes of several names together. */
export function total(simulation: Simulation, names: readonly string[]): Outcome {
  const sum = blank();
  for (const name of names) {
    const outcome = simulation.outcomes.get(name);
    if (!outcome) throw new Error(`No traffic named ${name}`);
    for (const field of Object.keys(sum) as (keyof Outcome)[]) sum[field] += outcome[field];
  }
  return sum;
}

/** The share of the names' requests that ran in a function. */
export const servedRatio = (simulation: Simulation, names: readonly string[]) => {
  const { sent, served } = total(simulation, names);
  return sent === 0 ? 1 : served / sent;
};

/** The name lib/throttling.ts gives each function of the stack (route key or handler), by construct id. */
const functionNames = new Map<string, string>([
  ...routes.map((route): [string, string] => [functionIdOf(route), routeKey(route)]),
  [pascalCase(unmatchedRoute.handler), unmatchedRoute.routeKey],
  ...[...queueConsumers, ...timedFunctions].map(({ handler }): [string, string] => [consumerIdOf(handler), handler]),
]);

/**
 * Each function of a synthesized service stack, by that name, with its reserved concurrency (undefined:
 * none). Functions that are not the service's own (CDK's custom resources) are left out.
 */
export function functionsOf(template: Template): Map<string, number | undefined> {
  const functions = template.findResources('AWS::Lambda::Function') as Record<
    string,
    { Properties: { ReservedConcurrentExecutions?: number } }
  >;
  const named = new Map<string, number | undefined>();
  for (const [logicalId, fn] of Object.entries(functions)) {
    const name = functionNames.get(logicalId.replace(/[0-9A-F]{8}$/, ''));
    if (name !== undefined) named.set(name, fn.Properties.ReservedConcurrentExecutions);
  }
  return named;
}

/** The reservations of a synthesized service stack, as the model's LambdaConcurrency takes them. */
export const reservedOf = (template: Template): Record<string, number> =>
  Object.fromEntries([...functionsOf(template)].filter((entry): entry is [string, number] => entry[1] !== undefined));
