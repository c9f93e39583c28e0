import { isTokenUseStamp } from '#functions/core/auth/token-use.ts';
import { db } from '#functions/core/store/dynamo.ts';
import { sqs } from '#functions/core/store/queues.ts';

export interface Sample {
  ms: number;
  /**
   * DynamoDB requests made while the operation ran, but for the stamps of a token's use: at most one
   * a minute per token (functions/core/auth/token-use.ts), sent beside the route's own requests, so
   * which request meets one depends on the clock, not on the route (a route with them is its count
   * plus two, at the same depth, or plus one level when it sends nothing after the token lookup).
   */
  roundTrips: number;
  /** The longest chain of those requests in which each started after the previous one had answered. */
  depth: number;
  /** SQS requests the functions made meanwhile (not the twin's pollers: on AWS the event source mapping receives and deletes). */
  queueRequests: number;
}

/** When one request was sent and when its answer came back (performance.now()). */
export interface Interval {
  start: number;
  end: number;
}

/**
 * How many requests of `intervals` had to wait for one another: the longest chain in which each
 * started at or after the end of the one before. Requests sent together (Promise.all) all start
 * before any answer arrives, so they are one level; a request sent because of an answer is the
 * next level. A Query's pages are levels too, since each page asks from where the last one ended.
 */
export function depthOf(intervals: readonly Interval[]): number {
  const byStart = [...intervals].sort((a, b) => a.start - b.start);
  const chain: number[] = [];
  byStart.forEach((request, index) => {
    let longest = 0;
    for (let before = 0; before < index; before++) {
      const earlier = byStart[before] as Interval;
      if (earlier.end <= request.start) longest = Math.max(longest, chain[before] ?? 0);
    }
    chain.push(longest + 1);
  });
  return Math.max(0, ...chain);
}

/**
 * Counts every DynamoDB and SQS request of this process's clients (the twin's handlers and the core
 * modules share them) while `body` runs, and hands it a `measure` that times one operation and
 * counts its round trips and their depth. Operations are measured one at a time.
 */
export async function countingRoundTrips<T>(
  body: (measure: (operation: () => Promise<unknown>) => Promise<Sample>) => Promise<T>,
): Promise<T> {
  const counts = { dynamo: 0, queue: 0 };
  let recording: Interval[] = [];
  const name = `bench-round-trips-${crypto.randomUUID()}`;
  db().middlewareStack.add(
    (next) => async (args) => {
      if (isTokenUseStamp(args.input)) return next(args);
      counts.dynamo++;
      const interval = { start: performance.now(), end: Number.POSITIVE_INFINITY };
      recording.push(interval);
      try {
        return await next(args);
      } finally {
        interval.end = performance.now();
      }
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
    recording = [];
    const started = performance.now();
    await operation();
    return {
      ms: performance.now() - started,
      roundTrips: counts.dynamo - before.dynamo,
      depth: depthOf(recording),
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
