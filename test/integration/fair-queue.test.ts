/**
 * The twin's fair queue over a real fauxqs of its own (not the shared twin's): the order SQS fair
 * queues hand messages out in, once one tenant holds a disproportionate share of those in flight.
 */
import { SendMessageBatchCommand, SQSClient } from '@aws-sdk/client-sqs';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { tenantGroup } from '#functions/core/store/queues.ts';
import { noisyInFlight, startFairQueue } from '#local/fair-queue.ts';
import { type LocalQueues, startLocalQueues } from '#local/queues.ts';
import { eventually } from '#test/support/templates.ts';

let queues: LocalQueues;
let sqs: SQSClient;
beforeAll(async () => {
  queues = await startLocalQueues();
  sqs = new SQSClient({
    endpoint: queues.endpoint,
    region: 'us-east-1',
    credentials: { accessKeyId: 'l', secretAccessKey: 'l' },
  });
  queues.groups.track(sqs);
});
afterAll(async () => {
  sqs.destroy();
  await queues.stop();
});

async function send(tenantId: number, count: number) {
  for (let start = 0; start < count; start += 10) {
    await sqs.send(
      new SendMessageBatchCommand({
        QueueUrl: queues.urls.webhook,
        Entries: Array.from({ length: Math.min(10, count - start) }, (_, index) => ({
          Id: String(index),
          MessageBody: JSON.stringify({ tenantId, n: start + index }),
          MessageGroupId: tenantGroup(tenantId),
        })),
      }),
    );
  }
}

test("once a tenant holds 30 messages in flight, another tenant's are handed out before the rest of its backlog", async () => {
  const fair = startFairQueue({
    sqs,
    queueUrl: queues.urls.webhook,
    visibilityTimeoutSeconds: 60,
    inFlight: () => queues.inFlight('webhook'),
    groups: queues.groups,
  });
  try {
    // The noisy tenant's backlog first, then a quiet tenant's few: fauxqs alone would hand them out in that order.
    await send(1, 100);
    await send(2, 5);
    await eventually(async () => (fair.waiting() === 105 ? true : undefined));
    const tenantsOf = async () =>
      (await fair.take(10)).map((message) => (JSON.parse(message.Body ?? '{}') as { tenantId: number }).tenantId);
    // Held in flight (never deleted), as a consumer busy with them would.
    const first = [...(await tenantsOf()), ...(await tenantsOf()), ...(await tenantsOf())];
    expect(first).toEqual(Array.from({ length: noisyInFlight }, () => 1));
    // Tenant 1 is noisy now: tenant 2's five come first, tenant 1 fills the rest of the batch.
    expect(await tenantsOf()).toEqual([2, 2, 2, 2, 2, 1, 1, 1, 1, 1]);
    expect(new Set(await tenantsOf())).toEqual(new Set([1]));
  } finally {
    await fair.stop();
  }
  // What it still held is visible again once it stops: nothing is kept hidden.
  expect(queues.inFlight('webhook').filter((message) => message.visibleAt > Date.now() + 120_000)).toEqual([]);
});

test('a tenant taking most of the recent processing time waits while others have messages, however few of its own are in flight', async () => {
  const fair = startFairQueue({
    sqs,
    queueUrl: queues.urls.fire,
    visibilityTimeoutSeconds: 60,
    inFlight: () => queues.inFlight('fire'),
    groups: queues.groups,
  });
  try {
    const sendTo = async (tenantId: number, count: number) => {
      await sqs.send(
        new SendMessageBatchCommand({
          QueueUrl: queues.urls.fire,
          Entries: Array.from({ length: count }, (_, index) => ({
            Id: String(index),
            MessageBody: JSON.stringify({ tenantId }),
            MessageGroupId: tenantGroup(tenantId),
          })),
        }),
      );
    };
    await sendTo(3, 1);
    await eventually(async () => (fair.waiting() === 1 ? true : undefined));
    const slow = await fair.take(10);
    // Its one message took a consumer 20 seconds: tenant 3 is noisy by processing time.
    fair.processed(slow, 20_000);
    await sendTo(3, 2);
    await sendTo(4, 2);
    await eventually(async () => (fair.waiting() === 4 ? true : undefined));
    const order = (await fair.take(10)).map((message) => (JSON.parse(message.Body ?? '{}') as { tenantId: number }).tenantId);
    expect(order).toEqual([4, 4, 3, 3]);
  } finally {
    await fair.stop();
  }
});
