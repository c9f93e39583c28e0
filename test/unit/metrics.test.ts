import type { APIGatewayProxyEventV2, Context } from 'aws-lambda';
import { expect, test } from 'vitest';
import { emfOf } from '../support/emf.ts';

// The twin silences EMF; here it is what is under test. Set before the modules read it.
process.env.POWERTOOLS_METRICS_DISABLED = 'false';
const { httpHandler } = await import('../../functions/core/api/http-handler.ts');

const event = (routeKey: string, path: string) =>
  ({
    version: '2.0',
    routeKey,
    rawPath: path,
    rawQueryString: '',
    headers: {},
    isBase64Encoded: false,
    requestContext: { requestId: 'req-metrics', http: { method: 'GET', path } },
  }) as unknown as APIGatewayProxyEventV2;
const context = { awsRequestId: 'lambda-request', functionName: 'health', getRemainingTimeInMillis: () => 1000 } as Context;

test('every request counts in Requests, and a 500 also in Errors, as EMF in namespace BiTenantAdmin', async () => {
  const ok = httpHandler(async () => ({ status: 200, body: { status: 'success', data: 'ok' } }));
  const [success] = await emfOf(() => ok(event('GET /health', '/health'), context));
  expect(success?._aws.CloudWatchMetrics[0]?.Namespace).toBe('BiTenantAdmin');
  expect(success).toMatchObject({ service: 'bi-tenant-admin', Requests: 1 });
  expect(success?.Errors).toBeUndefined();

  const broken = httpHandler(async () => {
    throw new Error('boom');
  });
  const [failure] = await emfOf(() => broken(event('GET /health', '/health'), context));
  expect(failure).toMatchObject({ Requests: 1, Errors: 1 });
});
