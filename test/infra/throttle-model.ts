/**
 * A model of what stands between a caller and the functions, for the throttling tests: API Gateway's
 * token buckets, fed with the synthesized stage's settings, and optionally the edge's WAF rate-based
 * rule in front of them. Time goes by a millisecond at a time.
 */

/** One bucket's settings, as the stage's CloudFormation spells them. */
export interface Limits {
  ThrottlingRateLimit: number;
  ThrottlingBurstLimit: number;
}

/** The throttling of the synthesized `$default` stage: the shared default, and the routes' own. */
export interface StageSettings {
  DefaultRouteSettings: Limits;
  RouteSettings?: Record<string, Limits>;
}

/** API Gateway's token bucket: `burst` tokens at most, refilled at `rate` a second. */
export class TokenBucket {
  private tokens: number;
  constructor(private readonly limits: Limits) {
    this.tokens = limits.ThrottlingBurstLimit;
  }
  refill(seconds: number) {
    this.tokens = Math.min(this.limits.ThrottlingBurstLimit, this.tokens + this.limits.ThrottlingRateLimit * seconds);
  }
  take(): boolean {
    if (this.tokens < 1) return false;
    this.tokens -= 1;
    return true;
  }
}

/**
 * The WAF's rate-based rule keyed on the caller (its `Authorization` header): each second it counts each
 * caller's requests over the last `windowSeconds`, blocked ones included (as WAF does), and blocks a
 * caller found over `limit`, but only `delaySeconds` later. AWS says its estimate can lag the real rate
 * for up to several minutes, "usually below 30 seconds": the model takes the usual case as given.
 */
export interface Firewall {
  limit: number;
  windowSeconds: number;
  delaySeconds: number;
}

class RateBasedRule {
  /** Each caller's requests in each second of the window, newest last. */
  private readonly counts = new Map<string, number[]>();
  /** When each caller found over the limit is blocked from (seconds into the run). */
  private readonly blockedFrom = new Map<string, number>();
  constructor(private readonly firewall: Firewall) {}

  /** Counts a request of the caller at `second`; true when it goes through to API Gateway. */
  admit(caller: string, second: number): boolean {
    const counts = this.counts.get(caller) ?? [0];
    counts[counts.length - 1] = (counts.at(-1) ?? 0) + 1;
    this.counts.set(caller, counts);
    const from = this.blockedFrom.get(caller);
    return from === undefined || second < from;
  }

  /** At the end of each second: judges every caller on its window, then opens the next second. */
  tick(second: number) {
    for (const [caller, counts] of this.counts) {
      const total = counts.reduce((sum, count) => sum + count, 0);
      if (total > this.firewall.limit) {
        if (!this.blockedFrom.has(caller)) this.blockedFrom.set(caller, second + 1 + this.firewall.delaySeconds);
      } else this.blockedFrom.delete(caller);
      counts.push(0);
      if (counts.length > this.firewall.windowSeconds) counts.shift();
    }
  }
}

/** A stream of requests: to the route `key`, `perSecond` of them, from `caller` (default: one caller per key). */
export interface Traffic {
  key: string;
  perSecond: number;
  caller?: string;
}

/**
 * Runs `seconds` of traffic through the firewall (if any) and the stage's buckets; counts, per caller
 * (or route, for traffic without one), what was sent and what got through to the functions, from the
 * second `countFrom` on.
 */
export function simulate(
  stage: StageSettings,
  traffic: Traffic[],
  options: { seconds?: number; countFrom?: number; firewall?: Firewall } = {},
) {
  const { seconds = 60, countFrom = 0 } = options;
  const shared = new TokenBucket(stage.DefaultRouteSettings);
  const own = new Map(Object.entries(stage.RouteSettings ?? {}).map(([key, limits]) => [key, new TokenBucket(limits)]));
  const bucketOf = (key: string) => own.get(key) ?? shared;
  const rule = options.firewall ? new RateBasedRule(options.firewall) : undefined;
  const callerOf = (stream: Traffic) => stream.caller ?? stream.key;
  const passed = new Map(traffic.map((stream) => [callerOf(stream), 0]));
  const sent = new Map(traffic.map((stream) => [callerOf(stream), 0]));
  const owed = traffic.map(() => 0);
  const add = (counts: Map<string, number>, caller: string) => counts.set(caller, (counts.get(caller) ?? 0) + 1);
  for (let ms = 0; ms < seconds * 1000; ms++) {
    const second = Math.floor(ms / 1000);
    shared.refill(0.001);
    for (const bucket of own.values()) bucket.refill(0.001);
    for (const [index, stream] of traffic.entries()) {
      owed[index] = (owed[index] ?? 0) + stream.perSecond / 1000;
      while ((owed[index] ?? 0) >= 1) {
        owed[index] = (owed[index] ?? 0) - 1;
        const counted = second >= countFrom;
        if (counted) add(sent, callerOf(stream));
        const admitted = rule ? rule.admit(callerOf(stream), second) : true;
        if (admitted && bucketOf(stream.key).take() && counted) add(passed, callerOf(stream));
      }
    }
    if (ms % 1000 === 999) rule?.tick(second);
  }
  return { passed, sent };
}
