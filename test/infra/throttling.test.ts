/**
 * API throttling and reserved concurrency (docs/operations.md, API throttling). API Gateway keeps a token
 * bucket per route (the stage's DefaultRouteSettings is the size of each token route's own bucket, not a
 * pool they share) and one per account and region that every request also takes from; the only buckets
 * routes share are the account's. lib/throttling.ts sizes every route's bucket (the hot routes' for 10
 * times the reference load) and reserves Lambda concurrency for the route classes, the consumers and the
 * timers.
 *
 * The flood scenarios run on a model of that (throttle-model.ts): the synthesized stage, the synthesized
 * functions' reservations, and for the edge the synthesized web ACL's rate-based rules, read by
 * waf-model.ts. WAF acts with a lag ("usually below 30 seconds", AWS: the model takes 30), so where the
 * edge is what stops a flood, the legitimate callers are all served from then on.
 */
import { readFileSync } from 'node:fs';
import { type Template } from 'aws-cdk-lib/assertions';
import { beforeAll, describe, expect, it } from 'vitest';
import { queueConsumers, routeKey, routes, timedFunctions } from '#functions/routes.ts';
import {
  ACCOUNT_CONCURRENCY_LIMIT,
  CONSUMER_CONCURRENCY,
  DEFAULT_ANONYMOUS_BURST_LIMIT,
  DEFAULT_ANONYMOUS_RATE_LIMIT,
  DEFAULT_API_BURST_LIMIT,
  DEFAULT_API_RATE_LIMIT,
} from '#lib/deployment-settings.ts';
import { ServiceStack } from '#lib/service-stack.ts';
import {
  HOT_ROUTES,
  ROUTE_DURATION_MS,
  type RouteBucket,
  reservations,
  routeBuckets,
  routeKeys,
  routeReservation,
} from '#lib/throttling.ts';
import { testApp } from '../support/cdk-app.ts';
import { TEST_BASE_DOMAIN as BASE, synthesizeProduction } from '../support/stages.ts';
import {
  type Invocations,
  type LambdaConcurrency,
  type Limits,
  type Requests,
  type StageSettings,
  UNRESERVED,
  reservedOf,
  servedRatio,
  simulate,
  total,
} from './throttle-model.ts';
import { type Firewall, WAF_DETECTION_SECONDS, firewallOf } from './waf-model.ts';
import { wholeTemplate } from '#test/support/whole-template.ts';

function single<T>(items: readonly T[], what: string): T {
  if (items.length !== 1) throw new Error(`Expected exactly one ${what}, found ${items.length}`);
  return items[0] as T;
}

const synthesize = (context: Record<string, unknown> = {}) =>
  wholeTemplate(new ServiceStack(testApp(context), 'Test', { stage: 'test', tenantBaseDomain: BASE }));

const stageSettingsOf = (template: Template): StageSettings =>
  single(Object.values(template.findResources('AWS::ApiGatewayV2::Stage')) as { Properties: StageSettings }[], 'stage')
    .Properties;

/** Each route's bucket as the model reads the stage: its own setting, else the default. */
const bucketsOfStage = (stage: StageSettings): Record<string, Limits> =>
  Object.fromEntries(routeKeys().map((key) => [key, stage.RouteSettings?.[key] ?? stage.DefaultRouteSettings]));

const limitsOf = (bucket: RouteBucket): Limits => ({
  ThrottlingRateLimit: bucket.rateLimit,
  ThrottlingBurstLimit: bucket.burstLimit,
});

/**
 * What keeps the consumers and timers busy: each consumer running batches at about its whole cap (a
 * backlog), each timer one run at a time (a tick a minute, up to a minute long).
 */
const backgroundWork: Invocations[] = [
  ...queueConsumers.map((consumer) => ({
    name: consumer.handler,
    function: consumer.handler,
    perSecond: CONSUMER_CONCURRENCY[consumer.concurrencySetting].fallback,
    durationMs: 990,
  })),
  ...timedFunctions.map((timed) => ({ name: timed.handler, function: timed.handler, perSecond: 1 / 60, durationMs: 59_000 })),
];
const backgroundNames = backgroundWork.map(({ name }) => name);

const lambdaOf = (template: Template): LambdaConcurrency => ({
  accountLimit: ACCOUNT_CONCURRENCY_LIMIT.fallback,
  reserved: reservedOf(template),
  routeDurationMs: ROUTE_DURATION_MS,
  invocations: backgroundWork,
});

/** Callers with tokens, each at 25 a second from an address of its own: what every scenario must keep serving. */
const legitimate: Requests[] = [
  { name: 'tenant backend', key: 'GET /tenant/users', perSecond: 25, caller: 'Bearer tenant-backend' },
  { name: 'integrator', key: 'GET /tenants', perSecond: 25, caller: 'Bearer integrator' },
  { name: 'agent heartbeats', key: 'POST /agent/heartbeat', perSecond: 25, caller: 'Bearer agent-1' },
  { name: 'agent reports', key: 'POST /agent/runs/{id}', perSecond: 25, caller: 'Bearer agent-2' },
  { name: 'sign-in', key: 'POST /tenant/login', perSecond: 25, caller: 'Bearer tenant-signing-in' },
];
const legitimateNames = legitimate.map(({ name }) => name);

const anonymousKeys = Object.entries(routeBuckets({ ...defaults() }))
  .filter(([key, bucket]) => bucket.routeClass === 'anonymous' || key === 'GET /auth/api/{token}')
  .map(([key]) => key);
const tokenKeys = routeKeys().filter((key) => !anonymousKeys.includes(key));
/** A path that only the `$default` route takes. */
const unmatchedPath = '/no/such/route';

/** The defaults of every bucket setting (what deploymentSettings gives without context). */
function defaults() {
  return {
    apiRateLimit: DEFAULT_API_RATE_LIMIT,
    apiBurstLimit: DEFAULT_API_BURST_LIMIT,
    anonymousRateLimit: DEFAULT_ANONYMOUS_RATE_LIMIT,
    anonymousBurstLimit: DEFAULT_ANONYMOUS_BURST_LIMIT,
    ...Object.fromEntries(
      HOT_ROUTES.flatMap((route) => [
        [route.rateSetting, route.fallback.rateLimit],
        [route.burstSetting, route.fallback.burstLimit],
      ]),
    ),
  } as Parameters<typeof routeBuckets>[0];
}

describe('route buckets', () => {
  let template: Template;
  let stage: StageSettings;

  beforeAll(() => {
    template = synthesize();
    stage = stageSettingsOf(template);
  });

  it('gives every route key, $default included, a bucket: hot routes their own, anonymous routes theirs, the rest the default', () => {
    const buckets = routeBuckets(defaults());
    expect(Object.keys(buckets).sort()).toEqual([...routes.map(routeKey), '$default'].sort());
    expect(Object.fromEntries(HOT_ROUTES.map((route) => [route.key, buckets[route.key]?.rateLimit]))).toEqual({
      'POST /agent/heartbeat': 250,
      'POST /agent/runs/{id}': 2000,
      'POST /tenant/login': 300,
      'GET /auth/api/{token}': 300,
    });
    for (const [key, bucket] of Object.entries(buckets)) {
      const hot = HOT_ROUTES.find((route) => route.key === key);
      const expected = hot
        ? hot.fallback
        : bucket.routeClass === 'anonymous'
          ? { rateLimit: DEFAULT_ANONYMOUS_RATE_LIMIT, burstLimit: DEFAULT_ANONYMOUS_BURST_LIMIT }
          : { rateLimit: DEFAULT_API_RATE_LIMIT, burstLimit: DEFAULT_API_BURST_LIMIT };
      expect({ rateLimit: bucket.rateLimit, burstLimit: bucket.burstLimit }, key).toEqual(expected);
      // Two seconds of the rate, under the account's 5,000.
      expect(bucket.burstLimit, key).toBe(2 * bucket.rateLimit);
    }
    expect(buckets.$default?.routeClass).toBe('anonymous');
    expect(buckets['GET /health']?.routeClass).toBe('anonymous');
    expect(buckets['GET /tenants']?.routeClass).toBe('integrator');
  });

  it('sizes the hot routes for 10 times the reference load, run reports for the runs bunched at the top of the hour', () => {
    const buckets = routeBuckets(defaults());
    const rate = (key: string) => buckets[key]?.rateLimit ?? 0;
    // 10 × 1,000 agents, each beating at most every 48 s.
    expect(rate('POST /agent/heartbeat')).toBeGreaterThanOrEqual((10 * 1000) / 48);
    // 10 × 5,000 hourly schedules fire at :00, 2 flows each: 100,000 runs, recorded by 50 reload workers at
    // 20 a second each, so "running" reports at 1,000 a second at most, and as many final reports.
    const recordedPerSecond = Math.min(CONSUMER_CONCURRENCY.reloadConcurrency.fallback * 20, (10 * 5000 * 2) / 48);
    expect(rate('POST /agent/runs/{id}')).toBeGreaterThanOrEqual(2 * recordedPerSecond);
    // 10 × 1,000 tenants' 100 requests a day, all logins, all in one hour; one landing per login.
    expect(rate('POST /tenant/login')).toBeGreaterThanOrEqual((10 * 1000 * 100) / 3600);
    expect(rate('GET /auth/api/{token}')).toBe(rate('POST /tenant/login'));
  });

  it('writes the stage from them: DefaultRouteSettings is each token route’s bucket, RouteSettings the others', () => {
    expect(stage.DefaultRouteSettings).toEqual({
      ThrottlingRateLimit: DEFAULT_API_RATE_LIMIT,
      ThrottlingBurstLimit: DEFAULT_API_BURST_LIMIT,
    });
    const buckets = routeBuckets(defaults());
    expect(Object.keys(stage.RouteSettings ?? {}).sort()).toEqual(
      [...new Set([...anonymousKeys, ...HOT_ROUTES.map((route) => route.key)])].sort(),
    );
    // What the stage gives every route is what routeBuckets says (the edge's limits are checked against it).
    expect(bucketsOfStage(stage)).toEqual(
      Object.fromEntries(Object.entries(buckets).map(([key, bucket]) => [key, limitsOf(bucket)])),
    );
  });

  it('takes every bucket from context, as strings or numbers', () => {
    const custom = stageSettingsOf(
      synthesize({
        apiRateLimit: '120',
        anonymousRateLimit: '5',
        anonymousBurstLimit: 10,
        heartbeatRateLimit: '400',
        heartbeatBurstLimit: 800,
        runReportRateLimit: 3000,
        runReportBurstLimit: '5000',
        loginRateLimit: 12.5,
        loginBurstLimit: '25',
        landingRateLimit: '60',
        landingBurstLimit: 90,
      }),
    );
    expect(custom.DefaultRouteSettings.ThrottlingRateLimit).toBe(120);
    expect(custom.RouteSettings).toMatchObject({
      'GET /health': { ThrottlingRateLimit: 5, ThrottlingBurstLimit: 10 },
      $default: { ThrottlingRateLimit: 5, ThrottlingBurstLimit: 10 },
      'POST /agent/heartbeat': { ThrottlingRateLimit: 400, ThrottlingBurstLimit: 800 },
      'POST /agent/runs/{id}': { ThrottlingRateLimit: 3000, ThrottlingBurstLimit: 5000 },
      'POST /tenant/login': { ThrottlingRateLimit: 12.5, ThrottlingBurstLimit: 25 },
      'GET /auth/api/{token}': { ThrottlingRateLimit: 60, ThrottlingBurstLimit: 90 },
    });
  });

  it('refuses a bucket past the account’s own (10,000 a second, bursts of 5,000), not positive, or a burst not whole', () => {
    const problem = (context: Record<string, unknown>) => {
      try {
        synthesize(context);
      } catch (error) {
        return (error as Error).message;
      }
      return 'accepted';
    };
    expect(problem({ runReportRateLimit: 10_001 })).toBe(
      "Context runReportRateLimit must be a positive number of at most 10000 (API Gateway's rate for the whole account " +
        `and region, which no route's bucket can pass), not "10001"`,
    );
    expect(problem({ heartbeatBurstLimit: '5001' })).toMatch(
      /Context heartbeatBurstLimit must be a positive whole number of at most 5000/,
    );
    expect(problem({ loginBurstLimit: 10.5 })).toMatch(/loginBurstLimit must be a positive whole number/);
    expect(problem({ landingRateLimit: '0' })).toMatch(/landingRateLimit must be a positive number/);
    expect(problem({ apiRateLimit: 'fast' })).toMatch(/apiRateLimit must be a positive number/);
    expect(problem({ anonymousBurstLimit: 6000 })).toMatch(/anonymousBurstLimit must be a positive whole number of at most 5000/);
    expect(problem({ runReportRateLimit: 10_000, runReportBurstLimit: 5000, accountConcurrencyLimit: 2000 })).toBe('accepted');
  });
});

describe('flood scenarios (the model, with the synthesized stage and reservations)', () => {
  let stage: StageSettings;
  let lambda: LambdaConcurrency;

  beforeAll(() => {
    const template = synthesize();
    stage = stageSettingsOf(template);
    lambda = lambdaOf(template);
  });

  /** The most a bucket lets through in `seconds`: its rate, and its burst once. */
  const mostThrough = (key: string, seconds: number) => {
    const limits = stage.RouteSettings?.[key] ?? stage.DefaultRouteSettings;
    return limits.ThrottlingRateLimit * seconds + limits.ThrottlingBurstLimit;
  };

  it('(a) 5,000 a second spread over the anonymous routes: every token route’s caller served, none of the unreserved pool taken', () => {
    const flood = anonymousKeys.map((key) => ({
      name: 'anonymous flood',
      key,
      perSecond: 5000 / anonymousKeys.length,
      path: key === '$default' ? unmatchedPath : undefined,
    }));
    const run = simulate(stage, [...flood, ...legitimate], { seconds: 60, lambda });
    for (const name of legitimateNames) expect(servedRatio(run, [name]), name).toBe(1);
    // Each anonymous route's bucket bounds what reaches its function, and its reservation what runs at once.
    const reached = total(run, ['anonymous flood']);
    expect(reached.served + reached.throttledByLambda).toBeLessThanOrEqual(
      anonymousKeys.reduce((sum, key) => sum + mostThrough(key, 60), 0),
    );
    for (const key of anonymousKeys) expect(run.peakConcurrency.get(key), key).toBeLessThanOrEqual(lambda.reserved[key] ?? 0);
    // The unreserved pool holds only the integrator routes' own callers (50 a second at 100 ms).
    expect(run.peakConcurrency.get(UNRESERVED)).toBeLessThanOrEqual(6);
    expect(total(run, backgroundNames).throttledByLambda).toBe(0);
  });

  it('(b) one token flooding a route at 5,000 a second: the other routes’ callers served; on its route, only the edge helps', () => {
    const flood = { name: 'flooding tenant', key: 'GET /tenant/users', perSecond: 5000, caller: 'Bearer flooding' };
    const run = simulate(stage, [flood, ...legitimate], { seconds: 60, lambda });
    for (const name of legitimateNames.filter((name) => name !== 'tenant backend'))
      expect(servedRatio(run, [name]), name).toBe(1);
    // Its route's bucket is the flood's and the other caller's on that route: without the edge it starves.
    expect(servedRatio(run, ['tenant backend'])).toBeLessThan(0.1);
  });

  it('(c) one address, a new made-up token each request: the route’s bucket spent on 401s, without the edge', () => {
    const flood = {
      name: 'made-up tokens',
      key: 'GET /tenant/users',
      perSecond: 5000,
      caller: (n: number) => `Bearer made-up-${n}`,
    };
    const run = simulate(stage, [flood, ...legitimate], { seconds: 60, lambda });
    for (const name of legitimateNames.filter((name) => name !== 'tenant backend'))
      expect(servedRatio(run, [name]), name).toBe(1);
    expect(servedRatio(run, ['tenant backend'])).toBeLessThan(0.1);
  });

  /** A flood from `callers` tokens and as many addresses, spread evenly over every route with a token. */
  const spreadFlood = (perSecond: number, callers: number): Requests[] =>
    tokenKeys.map((key, index) => ({
      name: 'spread flood',
      key,
      perSecond: perSecond / tokenKeys.length,
      caller: (n: number) => `Bearer flood-${(n + index) % callers}`,
      address: (n: number) => `198.18.${(n + index) % callers}.1`,
    }));

  it('(d) 5,000 a second over every token route, from callers under every edge limit: nothing stops it, and all are served', () => {
    const run = simulate(stage, [...spreadFlood(5000, 200), ...legitimate], { seconds: 30, lambda });
    for (const name of legitimateNames) expect(servedRatio(run, [name]), name).toBe(1);
    // No route's bucket binds (about 70 a second each), nor the account's (10,000): per route, the flood is legitimate traffic.
    expect(servedRatio(run, ['spread flood'])).toBe(1);
    // Its concurrency fits the unreserved pool; the consumers and timers keep theirs.
    const reserved = Object.values(lambda.reserved).reduce((sum, value) => sum + value, 0);
    expect(run.peakConcurrency.get(UNRESERVED)).toBeLessThanOrEqual(lambda.accountLimit - reserved);
    expect(total(run, backgroundNames)).toMatchObject({ throttledByLambda: 0 });
  });

  it('(d) heavier, 9,500 a second: Lambda concurrency bounds it; reservations keep consumers, timers, agents and sign-in whole', () => {
    const withReservations = simulate(stage, [...spreadFlood(9500, 400), ...legitimate], { seconds: 20, lambda });
    expect(total(withReservations, backgroundNames).throttledByLambda).toBe(0);
    for (const name of ['agent heartbeats', 'agent reports', 'sign-in'])
      expect(servedRatio(withReservations, [name]), name).toBe(1);
    // The integrator routes share the unreserved pool with the flood, and it is full: they lose some.
    const reserved = Object.values(lambda.reserved).reduce((sum, value) => sum + value, 0);
    expect(withReservations.peakConcurrency.get(UNRESERVED)).toBe(lambda.accountLimit - reserved);
    expect(servedRatio(withReservations, ['integrator'])).toBeLessThan(1);
    expect(total(withReservations, ['spread flood']).throttledByLambda).toBeGreaterThan(0);
    // Without reservations the same flood takes the consumers' and the agents' concurrency too.
    const unreserved = lambdaOf(synthesize({ reserveConcurrency: 'false' }));
    expect(unreserved.reserved).toEqual({});
    const without = simulate(stage, [...spreadFlood(9500, 400), ...legitimate], { seconds: 20, lambda: unreserved });
    expect(total(without, backgroundNames).throttledByLambda).toBeGreaterThan(0);
    expect(servedRatio(without, ['agent heartbeats'])).toBeLessThan(1);
  });

  it('(d) past the account’s 10,000 a second: the account’s bucket is what bounds it, for every API of the account', () => {
    const seconds = 10;
    const run = simulate(stage, [...spreadFlood(20_000, 400), ...legitimate], { seconds, lambda });
    const all = total(run, ['spread flood', ...legitimateNames]);
    expect(all.throttledByAccount).toBeGreaterThan(0);
    expect(all.served + all.throttledByLambda).toBeLessThanOrEqual(10_000 * seconds + 5000);
    expect(total(run, backgroundNames).throttledByLambda).toBe(0);
  });
});

describe('flood scenarios with the edge (the synthesized production app and web ACL)', () => {
  let stage: StageSettings;
  let lambda: LambdaConcurrency;
  let firewall: Firewall;

  beforeAll(() => {
    const { service, edge: edgeTemplate } = synthesizeProduction();
    stage = stageSettingsOf(service);
    lambda = lambdaOf(service);
    const edge = edgeTemplate as Template;
    const acl = single(Object.values(edge.findResources('AWS::WAFv2::WebACL')) as { Properties: unknown }[], 'web ACL');
    firewall = firewallOf(acl.Properties, WAF_DETECTION_SECONDS);
  });

  /** From the second the block takes effect, and the route's bucket has refilled. */
  const afterTheLag = WAF_DETECTION_SECONDS + 3;

  it('reads every rate-based rule of the web ACL: per token, per address on the anonymous paths or not, per address', () => {
    const sample = { caller: 'Bearer  Sample', address: '192.0.2.10', path: '/tenant/users' };
    expect(firewall.rules.length).toBeGreaterThanOrEqual(3);
    // One rule keys on the token (however spelled, once the edge folds it), the others on the address.
    const keys = firewall.rules.map((rule) => rule.keyOf(sample));
    expect(keys.filter((key) => key === sample.address).length).toBeGreaterThanOrEqual(2);
    expect(keys.some((key) => key !== undefined && key !== sample.address)).toBe(true);
  });

  it('(a) one address flooding the anonymous routes at 5,000 a second: blocked after the lag, token routes served throughout', () => {
    const flood = anonymousKeys.map((key) => ({
      name: 'anonymous flood',
      key,
      perSecond: 5000 / anonymousKeys.length,
      address: '203.0.113.66',
      path: key === '$default' ? unmatchedPath : undefined,
    }));
    const run = simulate(stage, [...flood, ...legitimate], { seconds: 90, firewall, lambda });
    for (const name of legitimateNames) expect(servedRatio(run, [name]), name).toBe(1);
    const after = simulate(stage, [...flood, ...legitimate], { seconds: 90, firewall, lambda, countFrom: afterTheLag });
    expect(total(after, ['anonymous flood']).served).toBe(0);
  });

  describe('(b) one token flooding GET /tenant/users at 5,000 a second, four other callers on it and other routes', () => {
    const flood = { name: 'flooding tenant', key: 'GET /tenant/users', perSecond: 5000, caller: 'Bearer flooding' };

    it('serves every request of the others from the block on, none of the flood’s; the other routes’ all along', () => {
      const seconds = 300;
      const afterBlock = simulate(stage, [flood, ...legitimate], { seconds, firewall, lambda, countFrom: afterTheLag });
      expect(servedRatio(afterBlock, legitimateNames)).toBe(1);
      expect(total(afterBlock, ['flooding tenant']).served).toBe(0);
      const whole = simulate(stage, [flood, ...legitimate], { seconds, firewall, lambda });
      for (const name of legitimateNames.filter((name) => name !== 'tenant backend'))
        expect(servedRatio(whole, [name]), name).toBe(1);
      // Its route's other caller loses only what the flood took before the WAF acted.
      expect(servedRatio(whole, ['tenant backend'])).toBeGreaterThan(0.85);
    });

    it('leaves callers within the limits alone: 25 a second each is 1,500 a minute', () => {
      const run = simulate(stage, legitimate, { seconds: 120, firewall, lambda });
      expect(servedRatio(run, legitimateNames)).toBe(1);
      expect(total(run, legitimateNames).blockedAtEdge).toBe(0);
    });
  });

  it('(c) one address sending a new made-up token each request: a rule keyed on the address blocks it; the route served after', () => {
    const flood = {
      name: 'made-up tokens',
      key: 'GET /tenant/users',
      perSecond: 5000,
      caller: (n: number) => `Bearer made-up-${n}`,
      address: '203.0.113.77',
    };
    const run = simulate(stage, [flood, ...legitimate], { seconds: 120, firewall, lambda, countFrom: afterTheLag });
    expect(servedRatio(run, legitimateNames)).toBe(1);
    expect(total(run, ['made-up tokens']).served).toBe(0);
    const sample = { caller: 'Bearer made-up-1', address: flood.address, path: '/tenant/users' };
    for (const name of run.blockedByRule.get('made-up tokens')?.keys() ?? [])
      expect(firewall.rules.find((rule) => rule.name === name)?.keyOf(sample), name).toBe(flood.address);
  });

  it('(d) 5,000 a second over every token route from callers under every edge limit: the edge lets it through, all served', () => {
    const run = simulate(stage, [...spreadFlood(5000, 200), ...legitimate], { seconds: 90, firewall, lambda });
    expect(servedRatio(run, legitimateNames)).toBe(1);
    expect(total(run, ['spread flood']).blockedAtEdge).toBe(0);
    expect(total(run, backgroundNames).throttledByLambda).toBe(0);
  });

  /** A flood from `callers` tokens and as many addresses, spread evenly over every route with a token. */
  function spreadFlood(perSecond: number, callers: number): Requests[] {
    return tokenKeys.map((key, index) => ({
      name: 'spread flood',
      key,
      perSecond: perSecond / tokenKeys.length,
      caller: (n: number) => `Bearer flood-${(n + index) % callers}`,
      address: (n: number) => `198.18.${(n + index) % callers}.1`,
    }));
  }
});

describe('docs/operations.md, Route buckets and reserved concurrency', () => {
  const guide = readFileSync(new URL('../../docs/operations.md', import.meta.url), 'utf8');
  const start = guide.indexOf('#### Route buckets and reserved concurrency');
  const section = guide.slice(start, guide.indexOf('\n### ', start));
  const rows = section.split('\n').filter((line) => line.startsWith('|'));
  // Lines wrap anywhere: the prose read as one line.
  const prose = section.replace(/\s+/g, ' ');
  const number = (value: number) => value.toLocaleString('en-US');

  it('lists each hot route with its bucket, its settings and its reservation', () => {
    const buckets = routeBuckets(defaults());
    for (const hot of HOT_ROUTES) {
      const row = rows.find((line) => line.startsWith(`| \`${hot.key}\``)) ?? '';
      const bucket = buckets[hot.key] as RouteBucket;
      expect(row, hot.key).toContain(`${number(bucket.rateLimit)}, ${number(bucket.burstLimit)}`);
      expect(row, hot.key).toContain(`\`${hot.rateSetting}\`, \`${hot.burstSetting}\``);
      expect(row, hot.key).toContain(`| ${routeReservation(bucket.rateLimit)} `);
    }
  });

  it('states what the buckets add up to, what the stack reserves, and quotes AWS with its pages', () => {
    const buckets = Object.values(routeBuckets(defaults()));
    expect(section).toContain(`${number(buckets.reduce((sum, bucket) => sum + bucket.rateLimit, 0))} a second`);
    const reserved = reservations({
      ...defaults(),
      reloadConcurrency: CONSUMER_CONCURRENCY.reloadConcurrency.fallback,
      webhookConcurrency: CONSUMER_CONCURRENCY.webhookConcurrency.fallback,
      fireConcurrency: CONSUMER_CONCURRENCY.fireConcurrency.fallback,
      rolloutConcurrency: CONSUMER_CONCURRENCY.rolloutConcurrency.fallback,
      reserveConcurrency: true,
      edge: true,
    });
    expect(section).toContain(`**${reserved.reduce((sum, reservation) => sum + reservation.concurrency, 0)}**`);
    for (const page of ['http-api-throttling.html', 'api-gateway-request-throttling.html', 'limits.html'])
      expect(section).toContain(`https://docs.aws.amazon.com/apigateway/latest/developerguide/${page}`);
    expect(prose).toContain('Per-API, per-stage throttling limits are applied at the API method level for a stage.');
    expect(prose).toContain("The default route throttling limits can't exceed account-level rate limits.");
  });
});
