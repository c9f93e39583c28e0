/**
 * Every consumer capped: each queue's event source runs at most its consumer's concurrency setting
 * (maximum concurrency, which reserves nothing); concurrency is reserved only where the route table
 * says it is needed (the fire worker), and a reservation that Lambda would refuse at deploy time
 * (fewer than 100 of the account's executions left unreserved) stops the synth instead.
 */
import { Template } from 'aws-cdk-lib/assertions';
import { describe, expect, it } from 'vitest';
import { queueConsumers } from '#functions/routes.ts';
import { consumerIdOf } from '#lib/construct-ids.ts';
import {
  ACCOUNT_CONCURRENCY_LIMIT,
  CONSUMER_CONCURRENCY,
  FIRE_CONCURRENCY,
  MINIMUM_UNRESERVED_CONCURRENCY,
} from '#lib/deployment-settings.ts';
import { ServiceStack } from '#lib/service-stack.ts';
import { testApp } from '../support/cdk-app.ts';

type Resource<P> = { Properties: P };
type LambdaFunction = Resource<{ ReservedConcurrentExecutions?: number }>;
type EventSourceMapping = Resource<{ FunctionName: { Ref: string }; ScalingConfig?: { MaximumConcurrency?: number } }>;

const synthesize = (context: Record<string, unknown> = {}) =>
  Template.fromStack(new ServiceStack(testApp(context), 'Test', { stage: 'test', tenantBaseDomain: 'bi.example.com' }));

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
      const mapping = mappings.find((candidate) => candidate.Properties.FunctionName.Ref === id);
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

describe('queue consumers', () => {
  it("caps every consumer's event source at its concurrency setting's default, and reserves only the fire worker's", () => {
    const concurrency = concurrencyOf(synthesize());
    for (const consumer of queueConsumers) {
      const fallback = CONSUMER_CONCURRENCY[consumer.concurrencySetting].fallback;
      expect(concurrency.get(consumer.handler), consumer.handler).toEqual({
        maximum: fallback,
        reserved: consumer.reservesConcurrency ? fallback : undefined,
      });
    }
    expect(queueConsumers.filter((consumer) => consumer.reservesConcurrency).map((consumer) => consumer.handler)).toEqual([
      'schedule-fire-worker',
    ]);
  });

  it('takes each cap from its context setting, within the event source maximum concurrency limits (2 to 1,000)', () => {
    const concurrency = concurrencyOf(synthesize({ reloadConcurrency: '7', webhookConcurrency: 3, fireConcurrency: '12' }));
    expect(Object.fromEntries(concurrency)).toEqual({
      'reload-worker': { maximum: 7, reserved: undefined },
      'webhook-deliverer': { maximum: 3, reserved: undefined },
      'schedule-fire-worker': { maximum: 12, reserved: 12 },
    });
    for (const name of Object.keys(CONSUMER_CONCURRENCY))
      for (const value of ['1', '1001', 'many'])
        expect(() => synthesize({ [name]: value }), `${name}=${value}`).toThrow(
          new RegExp(`Context ${name} must be a whole number from 2 to 1000`),
        );
  });

  it('refuses a reservation that would leave fewer than 100 of accountConcurrencyLimit unreserved, saying what to do', () => {
    expect(ACCOUNT_CONCURRENCY_LIMIT.fallback).toBe(1000);
    const justEnough = MINIMUM_UNRESERVED_CONCURRENCY + FIRE_CONCURRENCY.fallback;
    expect(concurrencyOf(synthesize({ accountConcurrencyLimit: justEnough })).get('schedule-fire-worker')?.reserved).toBe(
      FIRE_CONCURRENCY.fallback,
    );
    const message = problemOf({ accountConcurrencyLimit: String(justEnough - 1) });
    expect(message).toContain(`reserves ${FIRE_CONCURRENCY.fallback} concurrent executions (schedule-fire-worker 10)`);
    expect(message).toContain(`leave ${MINIMUM_UNRESERVED_CONCURRENCY - 1} of the account's ${justEnough - 1}`);
    for (const remedy of ['Service Quotas', 'lower fireConcurrency', 'reserveConcurrency to false'])
      expect(message).toContain(remedy);
    // A bigger reservation needs a bigger quota.
    expect(problemOf({ fireConcurrency: 950 })).toMatch(/leave 50 of the account's 1000/);
  });

  it('reserves nothing with reserveConcurrency false, so a low-quota account deploys, every consumer still capped', () => {
    const concurrency = concurrencyOf(synthesize({ accountConcurrencyLimit: 10, reserveConcurrency: 'false' }));
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
