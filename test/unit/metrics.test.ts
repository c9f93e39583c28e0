import type { APIGatewayProxyEventV2, Context, SQSEvent } from 'aws-lambda';
import { afterEach, expect, test, vi } from 'vitest';
import { emfOf } from '#test/support/emf.ts';

// The twin silences EMF; here it is what is under test. Set before the modules read it, as the stage is.
process.env.POWERTOOLS_METRICS_DISABLED = 'false';
process.env.SERVICE_STAGE = 'unit';
const { httpHandler } = await import('#functions/core/api/http-handler.ts');
const { messagePutBack, workerHandler } = await import('#functions/core/api/worker-handler.ts');
const { count } = await import('#functions/core/observability/metrics.ts');

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

afterEach(() => {
  vi.restoreAllMocks();
});

/** Runs the handler and returns what it printed, on stdout and stderr. */
async function outputOf(run: () => Promise<unknown>) {
  const written: string[] = [];
  for (const stream of [process.stdout, process.stderr]) {
    vi.spyOn(stream, 'write').mockImplementation((chunk) => {
      written.push(String(chunk));
      return true;
    });
  }
  await run().catch(() => undefined);
  vi.restoreAllMocks();
  return written;
}

test('every request counts in Requests, and a 500 also in Errors, as EMF in namespace BiTenantAdmin', async () => {
  const ok = httpHandler(async () => ({ status: 200, body: { status: 'success', data: 'ok' } }));
  const [success] = await emfOf(() => ok(event('GET /health', '/health'), context));
  expect(success?._aws.CloudWatchMetrics[0]?.Namespace).toBe('BiTenantAdmin');
  expect(success).toMatchObject({ service: 'bi-tenant-admin', stage: 'unit', Requests: 1 });
  // The stage is a dimension: staging's alarms never read prod's metrics.
  expect(success?._aws.CloudWatchMetrics[0]).toMatchObject({ Dimensions: [['service', 'stage']] });
  expect(success?.Errors).toBeUndefined();

  const broken = httpHandler(async () => {
    throw new Error('boom');
  });
  const [failure] = await emfOf(() => broken(event('GET /health', '/health'), context));
  expect(failure).toMatchObject({ Requests: 1, Errors: 1 });
});

test('a worker publishes what it counted under the same names, even when it fails, and prints nothing when it counted nothing', async () => {
  const batch = { Records: [] } as unknown as SQSEvent;
  const deliverer = workerHandler(async (_event: SQSEvent) => {
    count('WebhookDeliveries');
    count('WebhookRetries', 2);
    return { batchItemFailures: [] };
  });
  const [published] = await emfOf(() => deliverer(batch, context));
  expect(published?._aws.CloudWatchMetrics[0]?.Namespace).toBe('BiTenantAdmin');
  expect(published).toMatchObject({ service: 'bi-tenant-admin', WebhookDeliveries: 1, WebhookRetries: 2 });

  const failing = workerHandler(async (_event: SQSEvent) => {
    count('ScheduleFires');
    throw new Error('boom');
  });
  expect(await emfOf(() => failing(batch, context).catch(() => undefined))).toEqual([
    expect.objectContaining({ ScheduleFires: 1 }),
  ]);

  // No EMF document, and no warning about the empty one, from a batch that counted nothing.
  const quiet = workerHandler(async (_event: SQSEvent) => ({ batchItemFailures: [] }));
  expect(await outputOf(() => quiet(batch, context))).toEqual([]);
});

test("a queue consumer publishes each batch's messages received and failed under its function's name, put-backs aside", async () => {
  const batch = (size: number) =>
    ({ Records: Array.from({ length: size }, (_, index) => ({ messageId: `m${index}` })) }) as unknown as SQSEvent;
  const consumer = { ...context, functionName: 'Stack-ReloadWorker-abc' } as Context;
  const consumerDocument = (documents: Awaited<ReturnType<typeof emfOf>>) =>
    documents.find((document) => 'ConsumerMessagesReceived' in document);

  const failingTwo = workerHandler(async (_event: SQSEvent) => ({
    batchItemFailures: [{ itemIdentifier: 'm0' }, { itemIdentifier: 'm1' }],
  }));
  const published = consumerDocument(await emfOf(() => failingTwo(batch(5), consumer)));
  expect(published).toMatchObject({
    service: 'bi-tenant-admin',
    stage: 'unit',
    FunctionName: 'Stack-ReloadWorker-abc',
    ConsumerMessagesReceived: 5,
    ConsumerMessagesFailed: 2,
  });
  expect(published?._aws.CloudWatchMetrics[0]).toMatchObject({ Dimensions: [['service', 'stage', 'FunctionName']] });

  // Messages put back on purpose (a webhook retry's delay) are reported failed to SQS, but are no failure of the consumer.
  const retrying = workerHandler(async (_event: SQSEvent, invocation: Context) => {
    messagePutBack(invocation);
    messagePutBack(invocation);
    return { batchItemFailures: [{ itemIdentifier: 'm0' }, { itemIdentifier: 'm1' }, { itemIdentifier: 'm2' }] };
  });
  expect(consumerDocument(await emfOf(() => retrying(batch(4), { ...consumer } as Context)))).toMatchObject({
    ConsumerMessagesReceived: 4,
    ConsumerMessagesFailed: 1,
  });

  // An invocation that throws fails its whole batch.
  const crashing = workerHandler(async (_event: SQSEvent) => {
    throw new Error('boom');
  });
  const crashed = await emfOf(() => crashing(batch(3), consumer).catch(() => undefined));
  expect(consumerDocument(crashed)).toMatchObject({ ConsumerMessagesReceived: 3, ConsumerMessagesFailed: 3 });

  // Counted apart: the invocation's other metrics keep the service-wide dimensions their alarms read.
  const counting = workerHandler(async (_event: SQSEvent) => {
    count('WebhookDeliveries');
    return { batchItemFailures: [] };
  });
  const documents = await emfOf(() => counting(batch(1), consumer));
  expect(documents.find((document) => 'WebhookDeliveries' in document)).not.toHaveProperty('FunctionName');
  expect(consumerDocument(documents)).toMatchObject({ ConsumerMessagesReceived: 1, ConsumerMessagesFailed: 0 });
});
