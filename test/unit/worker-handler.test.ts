import type { Context, ScheduledEvent } from 'aws-lambda';
import { afterEach, expect, test, vi } from 'vitest';
import { workerHandler } from '#functions/core/api/worker-handler.ts';

const context = {
  awsRequestId: 'lambda-request',
  functionName: 'schedule-dispatcher',
  getRemainingTimeInMillis: () => 1000,
} as Context;
const tick = { 'detail-type': 'Scheduled Event', time: '2020-06-01T09:30:00Z' } as ScheduledEvent;

afterEach(() => {
  vi.restoreAllMocks();
});

test("a timer's result is its handler's", async () => {
  const handler = workerHandler(async (event: ScheduledEvent) => ({ tick: event.time, due: 0 }));
  expect(await handler(tick, context)).toEqual({ tick: '2020-06-01T09:30:00Z', due: 0 });
});

test('a failed invocation is thrown, as Lambda needs it, after one error line in the invocation context', async () => {
  const written: string[] = [];
  for (const stream of [process.stdout, process.stderr]) {
    vi.spyOn(stream, 'write').mockImplementation((chunk) => {
      written.push(String(chunk));
      return true;
    });
  }
  const handler = workerHandler(async (_event: ScheduledEvent) => {
    throw new Error('the table is unreachable');
  });
  await expect(handler(tick, context)).rejects.toThrow('the table is unreachable');
  vi.restoreAllMocks();
  const lines = written
    .join('')
    .split('\n')
    .filter((line) => line.startsWith('{'))
    .map((line) => JSON.parse(line) as Record<string, unknown>);
  expect(lines).toEqual([
    expect.objectContaining({
      level: 'ERROR',
      message: 'Invocation failed',
      function_name: 'schedule-dispatcher',
      function_request_id: 'lambda-request',
      error: expect.objectContaining({ message: 'the table is unreachable' }),
    }),
  ]);
});
