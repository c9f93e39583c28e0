import { db } from '#functions/core/store/dynamo.ts';
import { sqs } from '#functions/core/store/queues.ts';

export interface Sample {
  ms: number;
  /** DynamoDB requests made while the operation ran. */
  roundTrips: number;
  /** SQS requests the functions made meanwhile (not the twin's pollers: on AWS the event source mapping receives and deletes). */
  queueRequests: number;
}

/**
 * Counts every DynamoDB and SQS request of this process's clients (the twin's handlers and the core
 * modules share them) while `body` runs, and hands it a `measure` that times one operation and
 * counts its round trips.
 */
export async function countingRoundTrips<T>(
  body: (measure: (operation: () => Promise<unknown>) => Promise<Sample>) => Promise<T>,
): Promise<T> {
  const counts = { dynamo: 0, queue: 0 };
  const name = `bench-round-trips-${crypto.randomUUID()}`;
  db().middlewareStack.add(
    (next) => async (args) => {
      counts.dynamo++;
      return next(args);
    },
    { step: 'initialize', name },
  );
  sqs().middlewareStack.add(
    (next) => async (args) => {
      counts.queue++;
      return next(args);
    },
    { step: 'initialize', name },
  );
  const measure = async (operation: () => Promise<unknown>): Promise<Sample> => {
    const before = { ...counts };
    const started = performance.now();
    await operation();
    return {
      ms: performance.now() - started,
      roundTrips: counts.dynamo - before.dynamo,
      queueRequests: counts.queue - before.queue,
    };
  };
  try {
    return await body(measure);
  } finally {
    db().middlewareStack.remove(name);
    sqs().middlewareStack.remove(name);
  }
}

export const median = (values: readonly number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)] ?? 0;
