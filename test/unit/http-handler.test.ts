import type { APIGatewayProxyEventV2, Context } from 'aws-lambda';
import { afterEach, expect, test, vi } from 'vitest';
import { type ApiRequest, httpHandler, queryParameter } from '#functions/core/api/http-handler.ts';
import { conflict } from '#functions/core/errors.ts';

const event = (requestId: string): APIGatewayProxyEventV2 =>
  ({
    version: '2.0',
    routeKey: 'GET /health',
    rawPath: '/health',
    rawQueryString: '',
    headers: {},
    isBase64Encoded: false,
    requestContext: { requestId, http: { method: 'GET', path: '/health' } },
  }) as unknown as APIGatewayProxyEventV2;

const context = { awsRequestId: 'lambda-request', functionName: 'health', getRemainingTimeInMillis: () => 1000 } as Context;

afterEach(() => {
  vi.restoreAllMocks();
});

test('an unexpected error is a generic 500 with the request id; the details go only to the log', async () => {
  const written: string[] = [];
  vi.spyOn(process.stdout, 'write').mockImplementation((chunk) => {
    written.push(String(chunk));
    return true;
  });
  vi.spyOn(process.stderr, 'write').mockImplementation((chunk) => {
    written.push(String(chunk));
    return true;
  });
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
