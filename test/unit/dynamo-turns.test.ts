import { describe, expect, test } from 'vitest';
import { partitionOf, takingTurns } from '#local/dynamo-turns.ts';

/** A task that ends when the test says so, noting when it started. */
function gate(started: string[], name: string) {
  let finish: () => void = () => undefined;
  const done = new Promise<void>((resolve) => {
    finish = resolve;
  });
  return {
    task: async () => {
      started.push(name);
      await done;
      return name;
    },
    finish,
  };
}

const settle = () => new Promise((resolve) => setTimeout(resolve, 0));

describe("the twin's DynamoDB turns", () => {
  test('never more than the places at once; a partition with one request waits for one of the busy partition, not all of its queue', async () => {
    const turns = takingTurns(2);
    const started: string[] = [];
    const noisy = Array.from({ length: 50 }, (_, index) => gate(started, `noisy ${index}`));
    const running = noisy.map((request) => turns.run('TENANT#1', request.task));
    const quiet = gate(started, 'quiet');
    const quietDone = turns.run('TENANT#2', quiet.task);
    await settle();
    expect(started).toEqual(['noisy 0', 'noisy 1']);
    noisy[0]?.finish();
    await settle();
    noisy[1]?.finish();
    await settle();
    // The noisy partition's next request was queued first and has its turn; then the quiet one's,
    // ahead of the 47 noisy requests queued before it.
    expect(started).toEqual(['noisy 0', 'noisy 1', 'noisy 2', 'quiet']);
    quiet.finish();
    expect(await quietDone).toBe('quiet');
    for (const request of noisy) request.finish();
    expect(await Promise.all(running)).toEqual(noisy.map((_, index) => `noisy ${index}`));
    expect(started).toHaveLength(51);
    expect(started.indexOf('quiet')).toBe(3);
  });

  test('a failed request frees its place', async () => {
    const turns = takingTurns(1);
    await expect(turns.run('a', () => Promise.reject(new Error('throttled')))).rejects.toThrow('throttled');
    expect(await turns.run('a', () => Promise.resolve('next'))).toBe('next');
  });

  test("a request's partition: the key condition's, else the first pk or gsi1pk in it", () => {
    expect(
      partitionOf({
        KeyConditionExpression: 'gsi1pk = :shard AND gsi1sk <= :upTo',
        ExpressionAttributeValues: { ':upTo': 'x', ':shard': 'SCHEDULES#DUE#3' },
      }),
    ).toBe('SCHEDULES#DUE#3');
    expect(partitionOf({ Key: { pk: 'TENANT#7', sk: 'TENANT' } })).toBe('TENANT#7');
    expect(
      partitionOf({ TransactItems: [{ Put: { Item: { sk: 'A', pk: 'TENANT#9' } } }, { Put: { Item: { pk: 'CLIENT#1' } } }] }),
    ).toBe('TENANT#9');
    expect(partitionOf({ TableName: 't' })).toBe('none');
  });
});
