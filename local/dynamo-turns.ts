import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';

/**
 * DynamoDB Local serves its requests about one at a time, in arrival order. On the twin a request
 * therefore waits behind every request queued before it: workers firing a noisy tenant's 10,000
 * schedules queue thousands, and a quiet tenant's fire, first in the fair queue, still waits seconds
 * for each of its requests. On AWS a partition has capacity of its own, and a tenant's requests do
 * not wait for another tenant's partition. So the twin lets `inFlight` requests through at once and
 * gives each place that frees to the partitions in turn: a request waits for at most one request of
 * each other partition with some queued, as if each partition served its own.
 */
export interface Turns {
  /** Runs `task` when it is `owner`'s turn (its partition's) and a place is free. */
  run<T>(owner: string, task: () => Promise<T>): Promise<T>;
}

export function takingTurns(inFlight: number): Turns {
  /** The owners with requests waiting, in turn order, each with its waiting requests, oldest first. */
  const waiting = new Map<string, Array<() => void>>();
  let running = 0;

  const startNext = () => {
    while (running < inFlight) {
      const next = waiting.entries().next();
      if (next.done) return;
      const [owner, queue] = next.value;
      // The owner goes to the back of the turn order, or leaves it when this was its last request.
      waiting.delete(owner);
      const start = queue.shift();
      if (queue.length > 0) waiting.set(owner, queue);
      running += 1;
      start?.();
    }
  };

  return {
    async run(owner, task) {
      await new Promise<void>((resolve) => {
        const queue = waiting.get(owner);
        if (queue) queue.push(resolve);
        else waiting.set(owner, [resolve]);
        startNext();
      });
      try {
        return await task();
      } finally {
        running -= 1;
        startNext();
      }
    },
  };
}

/** Requests to DynamoDB Local at once: enough to keep it busy, few enough that a turn comes soon. */
export const dynamoRequestsInFlight = 8;

/**
 * The partition a request goes to first: the one its key condition names (a Query), else the first
 * `pk` or `gsi1pk` in it (a key, an item, a batch's or transaction's first).
 */
export function partitionOf(input: unknown): string {
  const query = input as { KeyConditionExpression?: unknown; ExpressionAttributeValues?: Record<string, unknown> };
  const placeholder =
    typeof query.KeyConditionExpression === 'string'
      ? /\b(?:pk|gsi1pk)\s*=\s*(:\w+)/.exec(query.KeyConditionExpression)?.[1]
      : undefined;
  const queried = placeholder === undefined ? undefined : query.ExpressionAttributeValues?.[placeholder];
  if (typeof queried === 'string') return queried;
  const pending: unknown[] = [input];
  for (let value = pending.shift(); value !== undefined; value = pending.shift()) {
    if (typeof value !== 'object' || value === null) continue;
    for (const [key, field] of Object.entries(value)) {
      if ((key === 'pk' || key === 'gsi1pk') && typeof field === 'string') return field;
      pending.push(field);
    }
  }
  return 'none';
}

const shared = new WeakSet<DynamoDBDocumentClient>();

/** Makes the functions' DynamoDB client take turns per partition (once per client). */
export function shareDynamoInTurns(client: DynamoDBDocumentClient, turns = takingTurns(dynamoRequestsInFlight)): void {
  if (shared.has(client)) return;
  shared.add(client);
  client.middlewareStack.add((next) => (args) => turns.run(partitionOf(args.input), () => next(args)), {
    step: 'initialize',
    name: 'twinDynamoTurns',
  });
}
