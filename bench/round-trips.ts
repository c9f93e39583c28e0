import { db } from '../functions/core/store/dynamo.ts';

export interface Sample {
  ms: number;
  /** DynamoDB requests made while the operation ran. */
  roundTrips: number;
}

/**
 * Counts every DynamoDB request of this process's client (the twin's handlers and the core modules
 * share it) while `body` runs, and hands it a `measure` that times one operation and counts its
 * round trips.
 */
export async function countingRoundTrips<T>(
  body: (measure: (operation: () => Promise<unknown>) => Promise<Sample>) => Promise<T>,
): Promise<T> {
  let roundTrips = 0;
  const name = `bench-round-trips-${crypto.randomUUID()}`;
  db().middlewareStack.add(
    (next) => async (args) => {
      roundTrips++;
      return next(args);
    },
    { step: 'initialize', name },
  );
  const measure = async (operation: () => Promise<unknown>): Promise<Sample> => {
    const before = roundTrips;
    const started = performance.now();
    await operation();
    return { ms: performance.now() - started, roundTrips: roundTrips - before };
  };
  try {
    return await body(measure);
  } finally {
    db().middlewareStack.remove(name);
  }
}

export const median = (values: readonly number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)] ?? 0;
