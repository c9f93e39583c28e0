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

test("a worker invoked inside a request's audit scope (the twin's pollers may start there) owes no record: it writes none", async () => {
  const { auditScopeFor } = await import('#functions/core/audit/audit-record.ts');
  const { pendingAudit, withAuditScope } = await import('#functions/core/audit/audit-scope.ts');
  const scope = auditScopeFor({
    chain: { owner: 'tenant', ownerId: 1, clientId: 1 },
    actor: { kind: 'tenant', clientId: 1, tenantId: 1 },
    action: 'POST /tenant/users',
    resource: { type: 'user' },
    fields: [],
    requestId: 'request',
  });
  const handler = workerHandler(async (_event: ScheduledEvent) => pendingAudit());
  expect(await withAuditScope(scope, async () => [pendingAudit() === scope, await handler(tick, context)])).toEqual([
    true,
    undefined,
  ]);
});
