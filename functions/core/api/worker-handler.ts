import { injectLambdaContext } from '@aws-lambda-powertools/logger/middleware';
import middy, { type MiddlewareObj } from '@middy/core';
import { outsideAuditScope } from '#functions/core/audit/audit-scope.ts';
import { ChangeMessageVisibilityCommand } from '@aws-sdk/client-sqs';
import type { Context, SQSBatchResponse, SQSEvent, SQSRecord } from 'aws-lambda';
import type { QueueName } from '#functions/core/store/queue-definitions.ts';
import { queueUrl, sqs } from '#functions/core/store/queues.ts';
import { config } from '#functions/core/config.ts';
import { runUntilKilled } from './middy-options.ts';
import { logger } from '#functions/core/observability/logger.ts';
import { countConsumerBatch, publishMetrics } from '#functions/core/observability/metrics.ts';

interface WorkerContext extends Context {
  startedAt?: number;
}

// A function missing its configuration fails here, at cold start, not on some later invocation.
config();

/** For a queue batch, how many records it had and how many are reported failed (left to SQS to redeliver). */
function batchOutcome(event: unknown, result: unknown): { records?: number; failed?: number } {
  const records = recordsOf(event);
  const failures = (result as Partial<SQSBatchResponse> | undefined)?.batchItemFailures;
  return records !== undefined && Array.isArray(failures) ? { records, failed: failures.length } : {};
}

/** The number of messages of a queue batch; undefined for any other event (a timer's). */
function recordsOf(event: unknown): number | undefined {
  const records = (event as Partial<SQSEvent> | undefined)?.Records;
  return Array.isArray(records) ? records.length : undefined;
}

/** Per invocation (its context), the messages the consumer reported failed on purpose. */
const putBackMessages = new WeakMap<Context, number>();

/**
 * Marks a message the consumer reports failed on purpose, for SQS to hand it out again later (a
 * webhook retry's delay, a delivery waiting for its endpoint): routine, so not a failure of the
 * consumer in its ConsumerMessagesFailed metric, whose ratio to the messages received has an alarm.
 */
export function messagePutBack(context: Context): void {
  putBackMessages.set(context, (putBackMessages.get(context) ?? 0) + 1);
}

/** SQS's longest visibility timeout: a longer wait takes several put-backs. */
export const maxVisibilitySeconds = 43_200;

/**
 * Puts a received message back on its queue, hidden for `delaySeconds` (at most SQS's 12 hours), and
 * reports it failed as put back (`messagePutBack`): SQS hands it out again then. Throws, as the
 * partial batch response needs a failed record to.
 */
export async function putMessageBack(
  context: Context,
  queue: QueueName,
  record: SQSRecord,
  delaySeconds: number,
  why: string,
): Promise<never> {
  await sqs().send(
    new ChangeMessageVisibilityCommand({
      QueueUrl: queueUrl(queue),
      ReceiptHandle: record.receiptHandle,
      VisibilityTimeout: Math.min(maxVisibilitySeconds, delaySeconds),
    }),
  );
  messagePutBack(context);
  throw new Error(why);
}

/** A queue batch's counts for the consumer's failure ratio; nothing for a timer, or a batch of no message. */
function countBatch(context: Context, records: number | undefined, failed: number | undefined): void {
  if (!records || failed === undefined) return;
  countConsumerBatch(context.functionName, records, Math.max(0, failed - (putBackMessages.get(context) ?? 0)));
}

/** One log line per invocation, as the HTTP side's access log: how long it took and how it ended. */
const invocationLog = <Event, Result>(): MiddlewareObj<Event, Result, Error, WorkerContext> => {
  const durationMs = (context: WorkerContext) => Math.round(performance.now() - (context.startedAt ?? performance.now()));
  return {
    before: async (request) => {
      request.context.startedAt = performance.now();
    },
    after: async (request) => {
      logger.info('Invocation handled', {
        durationMs: durationMs(request.context),
        ...batchOutcome(request.event, request.response),
      });
    },
    onError: async (request) => {
      logger.error('Invocation failed', { durationMs: durationMs(request.context), error: request.error ?? undefined });
    },
  };
};

/**
 * Metrics counted during the invocation, flushed as EMF when it ends, even in error; for a queue
 * batch, also its messages received and failed (an invocation that failed fails its whole batch).
 * Powertools' logMetrics would warn on every invocation that counted nothing (a reload batch, a
 * tick with nothing due); an HTTP request always counts one.
 */
const countedMetrics = (): MiddlewareObj => ({
  after: async (request) => {
    const { records, failed } = batchOutcome(request.event, request.response);
    countBatch(request.context, records, failed);
    publishMetrics();
  },
  onError: async (request) => {
    const records = recordsOf(request.event);
    countBatch(request.context, records, records);
    publishMetrics();
  },
});

/**
 * Wraps a function that is not an HTTP route (a queue consumer, a timer), for any event and result:
 * the invocation's logging context (function name, request id; the previous invocation's keys
 * dropped), one log line per invocation, and the metrics it counted. It runs outside any request's
 * audit scope: a worker carries out what a recorded request asked and writes no record (on AWS it is
 * a function of its own; in the twin, whose pollers may have been started by a request, it could
 * otherwise inherit that request's scope).
 */
export function workerHandler<Event, Result>(work: (event: Event, context: Context) => Promise<Result>) {
  return middy<Event, Result, Error, WorkerContext>(runUntilKilled)
    .use(injectLambdaContext(logger, { resetKeys: true }))
    .use(countedMetrics())
    .use(invocationLog<Event, Result>())
    .handler((event, context) => outsideAuditScope(() => work(event, context)));
}
