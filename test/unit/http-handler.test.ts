import type { APIGatewayProxyEventV2, Context } from 'aws-lambda';
import { afterEach, describe, expect, onTestFinished, test, vi } from 'vitest';
import { type ApiRequest, httpHandler, queryParameter } from '#functions/core/api/http-handler.ts';
import { requestIdOf } from '#functions/core/api/request-id.ts';
import { conflict } from '#functions/core/errors.ts';
import { logger } from '#functions/core/observability/logger.ts';

const event = (requestId: string, headers: Record<string, string> = {}): APIGatewayProxyEventV2 =>
  ({
    version: '2.0',
    routeKey: 'GET /health',
    rawPath: '/health',
    rawQueryString: '',
    headers,
    isBase64Encoded: false,
    requestContext: { requestId, http: { method: 'GET', path: '/health' } },
  }) as unknown as APIGatewayProxyEventV2;

/** What the handler writes to stdout and stderr meanwhile, as lines (the logger's are JSON). */
function capturedOutput(): string[] {
  const written: string[] = [];
  const capture = (chunk: unknown) => {
    written.push(String(chunk));
    return true;
  };
  vi.spyOn(process.stdout, 'write').mockImplementation(capture);
  vi.spyOn(process.stderr, 'write').mockImplementation(capture);
  return written;
}
const jsonLines = (written: string[]) =>
  written
    .join('')
    .split('\n')
    .filter((line) => line.startsWith('{'))
    .map((line) => JSON.parse(line) as Record<string, unknown>);

const context = { awsRequestId: 'lambda-request', functionName: 'health', getRemainingTimeInMillis: () => 1000 } as Context;

afterEach(() => {
  vi.restoreAllMocks();
});

test('an unexpected error is a generic 500 with the request id; the details go only to the log', async () => {
  const written = capturedOutput();
  const handler = httpHandler(async () => {
    throw new Error('connect ECONNREFUSED 10.1.2.3:8000 table=secret-table');
  });
  const result = await handler(event('req-500'), context);
  expect(result.statusCode).toBe(500);
  expect(result.headers?.['x-request-id']).toBe('req-500');
  expect(JSON.parse(result.body ?? '')).toEqual({
    status: 'error',
    success: false,
    message: 'Internal server error',
    code: 'internal_error',
    errors: [],
    errorCount: 0,
    requestId: 'req-500',
  });
  expect(result.body).not.toContain('ECONNREFUSED');
  const logLine = written
    .join('')
    .split('\n')
    .find((line) => line.includes('ECONNREFUSED'));
  expect(logLine).toBeDefined();
  expect(JSON.parse(logLine ?? '{}')).toMatchObject({ level: 'ERROR', requestId: 'req-500' });
});

test('a domain error keeps its status, code and message in the envelope', async () => {
  const handler = httpHandler(async () => {
    throw conflict('Tenant is inactive', 'tenant_inactive');
  });
  const result = await handler(event('req-409'), context);
  expect(result.statusCode).toBe(409);
  expect(JSON.parse(result.body ?? '')).toMatchObject({
    code: 'tenant_inactive',
    message: 'Tenant is inactive',
    requestId: 'req-409',
  });
});

test('an event for a route missing from the table is a 500, not a silent pass', async () => {
  const handler = httpHandler(async () => ({ status: 200, body: {} }));
  const result = await handler({ ...event('req-x'), routeKey: 'GET /nowhere' }, context);
  expect(result.statusCode).toBe(500);
});

test('a handler reads only the query parameters its row declares: another is a wiring error, not silence', () => {
  const request = {
    route: { key: 'GET /auth/api/{token}', query: [{ name: 'ref', schema: { type: 'string' } }] },
    query: { ref: 'desk-1', showMenu: '0' },
  } as unknown as ApiRequest<unknown>;
  expect(queryParameter(request, 'ref')).toBe('desk-1');
  expect(() => queryParameter(request, 'showMenu')).toThrow(
    'GET /auth/api/{token}: the route table declares no query parameter showMenu',
  );
});

describe("a caller's X-Request-Id", () => {
  const chosen = (value: string | undefined) =>
    requestIdOf(event('gateway-id', value === undefined ? {} : { 'x-request-id': value }));

  test('is used when it is 1 to 128 visible ASCII characters; anything else is replaced by the gateway id', () => {
    const visible = Array.from({ length: 0x7e - 0x21 + 1 }, (_, index) => String.fromCharCode(0x21 + index)).join('');
    for (const valid of ['a', 'x'.repeat(128), visible, 'order-42/retry:1', '"quoted",{json}']) expect(chosen(valid)).toBe(valid);
    for (const invalid of [
      undefined,
      '',
      'x'.repeat(129),
      'two words',
      ' leading',
      'trailing ',
      'tab\there',
      'line\nbreak',
      'carriage\rreturn',
      'nul\u0000',
      'del\u007f',
      'café',
      'non-breaking\u00a0space',
      'snow☃man',
      '\u{1f600}',
    ]) {
      expect(chosen(invalid), JSON.stringify(invalid)).toBe('gateway-id');
    }
  });

  test('is echoed, in the envelope, in every log line of the request; the gateway id beside it in the access line', async () => {
    const written = capturedOutput();
    // The suite logs warnings only, and each invocation starts at that level again: the access line is at INFO.
    const atInfo = () => logger.setLogLevel('INFO');
    onTestFinished(() => logger.setLogLevel('WARN'));
    const failing = httpHandler(async () => {
      atInfo();
      throw new Error('boom');
    });
    const answered = httpHandler(async ({ requestId }) => {
      atInfo();
      return { status: 200, body: { requestId } };
    });
    const ok = await answered(event('gateway-1', { 'x-request-id': 'caller-1' }), context);
    expect(ok.headers?.['x-request-id']).toBe('caller-1');
    expect(JSON.parse(ok.body ?? '')).toEqual({ requestId: 'caller-1' });
    const failed = await failing(event('gateway-2', { 'x-request-id': 'caller-2' }), context);
    expect(failed.headers?.['x-request-id']).toBe('caller-2');
    expect(JSON.parse(failed.body ?? '')).toMatchObject({ code: 'internal_error', requestId: 'caller-2' });
    const replaced = await answered(event('gateway-3', { 'x-request-id': 'no spaces\r\nx-injected: 1' }), context);
    expect(replaced.headers?.['x-request-id']).toBe('gateway-3');

    const lines = jsonLines(written);
    const ofSecond = lines.filter((line) => line.requestId === 'caller-2');
    expect(ofSecond.map((line) => line.message)).toEqual(['Unhandled error', 'Request handled']);
    expect(lines.filter((line) => line.message === 'Request handled')).toEqual([
      expect.objectContaining({ requestId: 'caller-1', gatewayRequestId: 'gateway-1', status: 200 }),
      expect.objectContaining({ requestId: 'caller-2', gatewayRequestId: 'gateway-2', status: 500 }),
      expect.objectContaining({ requestId: 'gateway-3', gatewayRequestId: 'gateway-3', status: 200 }),
    ]);
    expect(written.join('')).not.toContain('x-injected');
  });

  test('is never a key: without an Idempotency-Key, the request key is the gateway id', async () => {
    const keyed = httpHandler(async ({ idempotency }) => ({ status: 200, body: { key: idempotency.requestKey } }));
    const answer = await keyed(event('gateway-unique', { 'x-request-id': 'same-for-every-request' }), context);
    expect(JSON.parse(answer.body ?? '')).toEqual({ key: 'gateway-unique' });
  });
});
