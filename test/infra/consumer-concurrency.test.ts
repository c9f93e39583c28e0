/**
 * Reserved concurrency (lib/throttling.ts, docs/operations.md, Route buckets and reserved concurrency):
 * every queue consumer is capped (its event source runs at most its concurrency setting's batches) and
 * reserves as much; the timers reserve two runs each; each function of the anonymous, sign-in and agent
 * routes reserves what its bucket lets through at 100 ms a request; the integrator routes reserve nothing
 * and share the rest. A flood on one class of routes then cannot take the consumers', the dispatcher's
 * or the sweeper's concurrency. A reservation that Lambda would refuse at deploy time (fewer than 100 of
 * the account's executions left unreserved) stops the synth instead, and `reserveConcurrency` false
 * turns every reservation off.
 */
import { type Template } from 'aws-cdk-lib/assertions';
import { describe, expect, it } from 'vitest';
import { queueConsumers, routeKey, routes, timedFunctions } from '#functions/routes.ts';
import { consumerIdOf } from '#lib/construct-ids.ts';
import {
  ACCOUNT_CONCURRENCY_LIMIT,
  CONSUMER_CONCURRENCY,
  DEFAULT_ANONYMOUS_RATE_LIMIT,
  FIRE_CONCURRENCY,
  MINIMUM_UNRESERVED_CONCURRENCY,
} from '#lib/deployment-settings.ts';
import { ServiceStack } from '#lib/service-stack.ts';
import { HOT_ROUTES, routeClassOf } from '#lib/throttling.ts';
import { testApp } from '../support/cdk-app.ts';
import { functionsOf } from './throttle-model.ts';
import { liveEventSourceOf, wholeTemplate } from '#test/support/whole-template.ts';

type Resource<P> = { Properties: P };
type LambdaFunction = Resource<{ ReservedConcurrentExecutions?: number }>;
type EventSourceMapping = Resource<{ FunctionName: unknown; ScalingConfig?: { MaximumConcurrency?: number } }>;

const synthesize = (context: Record<string, unknown> = {}) =>
  wholeTemplate(new ServiceStack(testApp(context), 'Test', { stage: 'test', tenantBaseDomain: 'bi.example.com' }));

/** Per consumer handler: its reserved concurrency and its event source's maximum concurrency. */
function concurrencyOf(template: Template): Map<string, { reserved?: number; maximum?: number }> {
  const functions = template.findResources('AWS::Lambda::Function') as Record<string, LambdaFunction>;
  const mappings = Object.values(template.findResources('AWS::Lambda::EventSourceMapping') as Record<string, EventSourceMapping>);
  expect(mappings).toHaveLength(queueConsumers.length);
  return new Map(
    queueConsumers.map((consumer) => {
      const id = Object.keys(functions).find((logicalId) =>
        new RegExp(`^${consumerIdOf(consumer.handler)}[0-9A-F]{8}$`).test(logicalId),
      );
      // The event source feeds the function's live alias (lib/function-stacks.ts).
      const mapping = liveEventSourceOf<EventSourceMapping['Properties']>(template, id ?? '');
      return [
        consumer.handler,
        {
          reserved: functions[id ?? '']?.Properties.ReservedConcurrentExecutions,
          maximum: mapping?.Properties.ScalingConfig?.MaximumConcurrency,
        },
      ];
    }),
  );
}

const problemOf = (context: Record<string, unknown>): string => {
  try {
    synthesize(context);
  } catch (error) {
    return (error as Error).message;
  }
  throw new Error('expected the synth to be refused');
};

const sum = (values: Iterable<number | undefined>) => [...values].reduce<number>((total, value) => total + (value ?? 0), 0);

/** What the stack reserves at its defaults: checked against the template below, and the base of the refusals. */
const DEFAULT_RESERVED = 409;

describe('queue consumers', () => {
  it("caps every consumer's event source at its concurrency setting's default, and reserves as much", () => {
    const concurrency = concurrencyOf(synthesize());
    for (const consumer of queueConsumers) {
      const fallback = CONSUMER_CONCURRENCY[consumer.concurrencySetting].fallback;
      expect(concurrency.get(consumer.handler), consumer.handler).toEqual({ maximum: fallback, reserved: fallback });
    }
  });

  it('takes each cap from its context setting, within the event source maximum concurrency limits (2 to 1,000)', () => {
    const concurrency = concurrencyOf(
      synthesize({ reloadConcurrency: '7', webhookConcurrency: 3, fireConcurrency: '12', rolloutConcurrency: '4' }),
    );
    expect(Object.fromEntries(concurrency)).toEqual({
      'reload-worker': { maximum: 7, reserved: 7 },
      'webhook-deliverer': { maximum: 3, reserved: 3 },
      'schedule-fire-worker': { maximum: 12, reserved: 12 },
      'rollout-worker': { maximum: 4, reserved: 4 },
    });
    for (const name of Object.keys(CONSUMER_CONCURRENCY))
      for (const value of ['1', '1001', 'many'])
        expect(() => synthesize({ [name]: value }), `${name}=${value}`).toThrow(
          new RegExp(`Context ${name} must be a whole number from 2 to 1000`),
        );
  });
});

describe('route classes and timers', () => {
  const functions = functionsOf(synthesize());

  it('reserves for each anonymous, sign-in and agent route what its bucket lets through at 100 ms a request, nothing for the integrator routes', () => {
    expect(Object.fromEntries(HOT_ROUTES.map((route) => [route.key, functions.get(route.key)]))).toEqual({
      'POST /agent/heartbeat': 25,
      'POST /agent/runs/{id}': 200,
      'POST /tenant/login': 30,
      'GET /auth/api/{token}': 30,
    });
    for (const key of [...routes.map(routeKey), '$default']) {
      expect(functions.has(key), key).toBe(true);
      const routeClass = routeClassOf(key);
      if (routeClass === 'integrator') expect(functions.get(key), key).toBeUndefined();
      else if (!HOT_ROUTES.some((route) => route.key === key))
        expect(functions.get(key), key).toBe((DEFAULT_ANONYMOUS_RATE_LIMIT * 100) / 1000);
    }
  });

  it('reserves two runs of each timer: a run may still be finishing when the next minute’s starts', () => {
    for (const timed of timedFunctions) expect(functions.get(timed.handler), timed.handler).toBe(2);
  });

  it(`reserves ${DEFAULT_RESERVED} of the account's ${ACCOUNT_CONCURRENCY_LIMIT.fallback} at the defaults, leaving the rest to the integrator routes and the account's other work`, () => {
    expect(sum(functions.values())).toBe(DEFAULT_RESERVED);
  });

  it('follows the buckets: a bigger bucket reserves more', () => {
    const custom = functionsOf(synthesize({ heartbeatRateLimit: 400, anonymousRateLimit: '12.5' }));
    expect(custom.get('POST /agent/heartbeat')).toBe(40);
    expect(custom.get('GET /health')).toBe(2);
    expect(custom.get('$default')).toBe(2);
  });
});

describe('the account’s unreserved concurrency', () => {
  it('refuses reservations that would leave fewer than 100 of accountConcurrencyLimit unreserved, naming the largest and what to do', () => {
    expect(ACCOUNT_CONCURRENCY_LIMIT.fallback).toBe(1000);
    const justEnough = MINIMUM_UNRESERVED_CONCURRENCY + DEFAULT_RESERVED;
    expect(sum(functionsOf(synthesize({ accountConcurrencyLimit: justEnough })).values())).toBe(DEFAULT_RESERVED);
    const message = problemOf({ accountConcurrencyLimit: String(justEnough - 1) });
    expect(message).toContain(`reserves ${DEFAULT_RESERVED} concurrent executions in`);
    expect(message).toContain(
      '(the largest: POST /agent/runs/{id} 200 (runReportRateLimit), reload-worker 50 (reloadConcurrency), ' +
        'POST /tenant/login 30 (loginRateLimit), GET /auth/api/{token} 30 (landingRateLimit))',
    );
    expect(message).toContain(`leave ${MINIMUM_UNRESERVED_CONCURRENCY - 1} of the account's ${justEnough - 1}`);
    for (const remedy of ['Service Quotas', 'lower runReportRateLimit, reloadConcurrency', 'reserveConcurrency to false'])
      expect(message).toContain(remedy);
    // A bigger reservation needs a bigger quota, and is named first.
    const bigger = problemOf({ fireConcurrency: 950 });
    expect(bigger).toMatch(/leave -349 of the account's 1000/);
    expect(bigger).toContain(`(the largest: schedule-fire-worker 950 (fireConcurrency)`);
    expect(FIRE_CONCURRENCY.fallback).toBe(10);
  });

  it('reserves nothing with reserveConcurrency false, so a low-quota account deploys, every consumer still capped', () => {
    const template = synthesize({ accountConcurrencyLimit: 10, reserveConcurrency: 'false' });
    expect([...functionsOf(template).values()].filter((value) => value !== undefined)).toEqual([]);
    const concurrency = concurrencyOf(template);
    for (const consumer of queueConsumers) {
      expect(concurrency.get(consumer.handler)?.reserved, consumer.handler).toBeUndefined();
      expect(concurrency.get(consumer.handler)?.maximum, consumer.handler).toBe(
        CONSUMER_CONCURRENCY[consumer.concurrencySetting].fallback,
      );
    }
    expect(problemOf({ reserveConcurrency: 'sometimes' })).toMatch(/Context reserveConcurrency must be true or false/);
    expect(problemOf({ accountConcurrencyLimit: 5 })).toMatch(/Context accountConcurrencyLimit must be a whole number from 10/);
  });
});
