/**
 * The webhook deliverer's handler called directly (as Lambda would), against the real table, the
 * real DLQ (fauxqs) and a real receiver on loopback. The deliveries are written straight to the
 * table, so the twin's own poller never sees their messages.
 */
import { DeleteMessageCommand, ReceiveMessageCommand, SQSClient } from '@aws-sdk/client-sqs';
import { PutCommand } from '@aws-sdk/lib-dynamodb';
import type { Context, SQSEvent, SQSRecord } from 'aws-lambda';
import { afterAll, beforeAll, describe, expect, inject, test, vi } from 'vitest';
import { tenantOwner } from '#functions/core/webhooks/owner.ts';
import { type Attempt, type AlertDeliveryRecord, findDelivery, findSettings } from '#functions/core/alerts/alert-repository.ts';
import { finishDelivery, messageText } from '#functions/core/alerts/deliveries.ts';
import { maxAttemptsPerDelivery, maxResponseBodyBytes, webhookConfig } from '#functions/core/alerts/webhook-config.ts';
import { db, tableName } from '#functions/core/store/dynamo.ts';
import * as stored from '#functions/core/store/entity-declarations.ts';
import { deadLetterUrlVariable } from '#functions/core/store/queue-definitions.ts';
import { handler } from '#functions/workers/webhook-deliverer.ts';
import { api, newClient, newTenant } from '#test/support/api.ts';
import { installFaultInjection, invocationTrace, newTrace, traced } from '#test/support/faults.ts';
import { eventually } from '#test/support/templates.ts';
import { startReceiver } from '#test/support/webhook-receiver.ts';

let receiver: Awaited<ReturnType<typeof startReceiver>>;
beforeAll(async () => {
  receiver = await startReceiver();
});
afterAll(() => receiver.close());

/** A tenant whose webhook points at `path`, and a delivery of `attemptsMade` failed attempts waiting for its next. */
async function pendingDelivery(
  path: string,
  attemptsMade: number,
  made: Attempt = { at: new Date().toISOString(), durationMs: 1, statusCode: 500 },
  roundStart = 0,
): Promise<AlertDeliveryRecord> {
  const tenant = await newTenant((await newClient()).token);
  const settings = await api('PATCH', '/tenant/settings', {
    token: tenant.token,
    body: { alertChannels: { webhook: { url: receiver.url(path) } } },
  });
  expect(settings.status).toBe(200);
  const now = new Date();
  const record: AlertDeliveryRecord = {
    tenantId: tenant.id,
    deliveryId: 1,
    alertId: 1,
    webhookId: `msg_${crypto.randomUUID().replaceAll('-', '')}`,
    trigger: 'fire',
    status: attemptsMade === 0 ? 'queued' : 'retrying',
    bytes: 2,
    attempts: Array.from({ length: attemptsMade }, () => made),
    roundStart,
    createdAt: now.toISOString(),
    expiresAt: Math.floor(now.getTime() / 1000) + 86_400,
  };
  await db().send(
    new PutCommand({
      TableName: tableName(),
      Item: { ...stored.delivery.key(record), ...stored.delivery.indexEntry(record), ...record },
    }),
  );
  return record;
}

const context = {
  awsRequestId: 'deliverer-request',
  functionName: 'webhook-deliverer',
  getRemainingTimeInMillis: () => 30_000,
} as Context;

const sqsRecord = (delivery: AlertDeliveryRecord): SQSRecord =>
  ({
    messageId: crypto.randomUUID(),
    receiptHandle: 'not-a-real-receipt',
    body: messageText({ tenantId: delivery.tenantId, deliveryId: delivery.deliveryId, body: '{}' }),
    attributes: { ApproximateReceiveCount: '1' },
  }) as unknown as SQSRecord;

describe('webhook deliverer', () => {
  test('when the DLQ cannot be reached after the last attempt, the delivery is not failed and the next receive dead-letters it', async () => {
    // The last attempt of the round (the test schedule: seven retries a second apart).
    const delivery = await pendingDelivery('/dlq-down', webhookConfig().retryDelaysSeconds.length);
    receiver.replyWith(() => ({ status: 500 }));
    const message = sqsRecord(delivery);
    const variable = deadLetterUrlVariable('webhook');
    const dlqUrl = process.env[variable] ?? '';
    const sqs = new SQSClient({ endpoint: inject('sqsEndpoint') });
    try {
      process.env[variable] = `${inject('sqsEndpoint')}/000000000000/no-such-dlq-${crypto.randomUUID()}`;
      const first = await handler({ Records: [message] } as SQSEvent, context);
      expect(first.batchItemFailures).toEqual([{ itemIdentifier: message.messageId }]);
      // Still retrying: the message's next receive must still be able to dead-letter it.
      expect((await findDelivery(tenantOwner(delivery.tenantId), delivery.deliveryId))?.status).toBe('retrying');

      process.env[variable] = dlqUrl;
      const second = await handler({ Records: [message] } as SQSEvent, context);
      expect(second.batchItemFailures).toEqual([]);
      const failed = await findDelivery(tenantOwner(delivery.tenantId), delivery.deliveryId);
      expect(failed).toMatchObject({ status: 'failed', failureReason: expect.stringMatching(/^Gave up after \d+ attempts/) });
      expect(failed?.attempts).toHaveLength(webhookConfig().retryDelaysSeconds.length + 1);
      const deadLetter = await eventually(async () => {
        const received = await sqs.send(
          new ReceiveMessageCommand({ QueueUrl: dlqUrl, MaxNumberOfMessages: 10, VisibilityTimeout: 0, WaitTimeSeconds: 1 }),
        );
        return received.Messages?.find((entry) => entry.Body === message.body);
      });
      await sqs.send(new DeleteMessageCommand({ QueueUrl: dlqUrl, ReceiptHandle: deadLetter.ReceiptHandle }));
    } finally {
      process.env[variable] = dlqUrl;
      sqs.destroy();
    }
  });

  test('a 410 stopped after any one of its writes never leaves the delivery failed on a channel still enabled', async () => {
    installFaultInjection();
    receiver.replyWith(() => ({ status: 410 }));
    // Every write of the attempt in turn (its slot, the channel, the delivery, the slot again), and one past them.
    for (let at = 1; at <= 5; at++) {
      const delivery = await pendingDelivery(`/gone-${at}`, 0);
      await traced(invocationTrace(newTrace(), { mode: 'kill', at }), () =>
        handler({ Records: [sqsRecord(delivery)] } as SQSEvent, context),
      ).catch(() => undefined);
      const record = await findDelivery(tenantOwner(delivery.tenantId), delivery.deliveryId);
      const { webhook } = await findSettings(tenantOwner(delivery.tenantId));
      if (record?.status === 'failed') expect(webhook?.enabled, `stopped after write ${at}`).toBe(false);
      if (at === 5) expect([record?.status, webhook?.enabled]).toEqual(['failed', false]);
    }
  });

  test('a copy that read the delivery before another copy delivered it, and takes the freed slot after, posts nothing', async () => {
    const delivery = await pendingDelivery('/late-copy', 0);
    receiver.replyWith(() => ({ status: 200 }));
    // The late copy's first read of the delivery is held until the other copy has delivered and let its slot go.
    const deliveryKey = stored.delivery.key(delivery);
    let release = () => {};
    const gate = new Promise<void>((resolve) => {
      release = resolve;
    });
    let held: (() => void) | undefined;
    const readHeld = new Promise<void>((resolve) => {
      held = resolve;
    });
    const name = `hold-late-copy-${crypto.randomUUID()}`;
    db().middlewareStack.add(
      (next) => async (args) => {
        const input = args.input as { Key?: { pk?: unknown; sk?: unknown } };
        const result = await next(args);
        if (held && input.Key?.pk === deliveryKey.pk && input.Key?.sk === deliveryKey.sk) {
          const holding = held;
          held = undefined;
          holding();
          await gate;
        }
        return result;
      },
      { step: 'initialize', name },
    );
    try {
      const late = handler({ Records: [sqsRecord(delivery)] } as SQSEvent, context);
      await readHeld;
      const first = await handler({ Records: [sqsRecord(delivery)] } as SQSEvent, context);
      expect(first.batchItemFailures).toEqual([]);
      release();
      expect((await late).batchItemFailures).toEqual([]);
    } finally {
      release();
      db().middlewareStack.remove(name);
    }
    expect(receiver.at('/late-copy')).toHaveLength(1);
    const record = await findDelivery(tenantOwner(delivery.tenantId), delivery.deliveryId);
    expect(record?.status).toBe('delivered');
    expect(record?.attempts).toHaveLength(1);
  });

  test('two copies of a message handled at once, the endpoint taking two attempts at once, post once', async () => {
    const delivery = await pendingDelivery('/two-copies', 0);
    // Slow enough that both copies are past their slot before either records its attempt.
    receiver.replyWith(() => ({ status: 200, delayMs: 1_500 }));
    const copies = [sqsRecord(delivery), sqsRecord(delivery)];
    const outcomes = await Promise.all(copies.map((copy) => handler({ Records: [copy] } as SQSEvent, context)));
    // One posts; the other is put back (not dropped: its message may be the one the retry needs) ...
    const putBack = outcomes.flatMap((outcome) => outcome.batchItemFailures.map((failure) => failure.itemIdentifier));
    expect(putBack).toHaveLength(1);
    expect(receiver.at('/two-copies')).toHaveLength(1);
    // ... and, back once the attempt is recorded, finds it delivered.
    const again = await handler({ Records: copies.filter((copy) => putBack.includes(copy.messageId)) } as SQSEvent, context);
    expect(again.batchItemFailures).toEqual([]);
    expect(receiver.at('/two-copies')).toHaveLength(1);
    const record = await findDelivery(tenantOwner(delivery.tenantId), delivery.deliveryId);
    expect(record?.status).toBe('delivered');
    expect(record?.attempts).toHaveLength(1);
    expect(record).not.toHaveProperty('attemptingUntil');
  });

  test('a copy that comes back before the retry its delivery waits for posts nothing and waits for it too', async () => {
    const delivery = await pendingDelivery('/early-copy', 1);
    const nextAttemptAt = new Date(Date.now() + 60_000).toISOString();
    const key = { ...stored.delivery.key(delivery), ...stored.delivery.indexEntry(delivery) };
    await db().send(new PutCommand({ TableName: tableName(), Item: { ...key, ...delivery, nextAttemptAt } }));
    receiver.replyWith(() => ({ status: 200 }));
    const copy = sqsRecord(delivery);
    const outcome = await handler({ Records: [copy] } as SQSEvent, context);
    expect(outcome.batchItemFailures).toEqual([{ itemIdentifier: copy.messageId }]);
    expect(receiver.at('/early-copy')).toHaveLength(0);
    expect((await findDelivery(tenantOwner(delivery.tenantId), delivery.deliveryId))?.attempts).toHaveLength(1);
  });

  test('messages that are not deliveries go to the DLQ at once (deferrals count as receives), and the batch is not thrown', async () => {
    const marker = crypto.randomUUID();
    const records = [`{not json ${marker}`, JSON.stringify({ tenantId: 'one', deliveryId: 1, marker })].map(
      (body) => ({ messageId: crypto.randomUUID(), receiptHandle: 'r', body, attributes: {} }) as unknown as SQSRecord,
    );
    const result = await handler({ Records: records } as SQSEvent, context);
    expect(result.batchItemFailures).toEqual([]);
    const sqs = new SQSClient({ endpoint: inject('sqsEndpoint') });
    const dlqUrl = process.env[deadLetterUrlVariable('webhook')] ?? '';
    try {
      const found: string[] = [];
      await eventually(async () => {
        const received = await sqs.send(
          new ReceiveMessageCommand({ QueueUrl: dlqUrl, MaxNumberOfMessages: 10, VisibilityTimeout: 0, WaitTimeSeconds: 1 }),
        );
        for (const message of received.Messages ?? []) {
          if (!message.Body?.includes(marker) || found.includes(message.Body)) continue;
          found.push(message.Body);
          await sqs.send(new DeleteMessageCommand({ QueueUrl: dlqUrl, ReceiptHandle: message.ReceiptHandle }));
        }
        return found.length === records.length ? true : undefined;
      });
      expect(found.sort()).toEqual(records.map((record) => record.body).sort());
    } finally {
      sqs.destroy();
    }
  });

  test('a receiver that answers 200 at once and sends its body slowly is delivered at once, not retried', async () => {
    const delivery = await pendingDelivery('/trickle', 0);
    // 12 seconds of body, a chunk every half second: longer than the 10-second time-out.
    const body = Array.from({ length: 24 }, (_, index) => `chunk-${String(index).padStart(3, '0')} `).join('');
    receiver.replyWith(() => ({ status: 200, body, trickle: { chunkLength: 10, everyMs: 500 } }));
    const result = await handler({ Records: [sqsRecord(delivery)] } as SQSEvent, context);
    expect(result.batchItemFailures).toEqual([]);
    const record = await findDelivery(tenantOwner(delivery.tenantId), delivery.deliveryId);
    expect(record).toMatchObject({ status: 'delivered', attempts: [{ statusCode: 200 }] });
    expect(record?.nextAttemptAt).toBeUndefined();
    const [attempt] = record?.attempts ?? [];
    expect(attempt?.error).toBeUndefined();
    // What came of the body before the sender stopped reading: its start, not all of it.
    expect(attempt?.responseBody).toMatch(/^chunk-000 /);
    expect(body.startsWith(attempt?.responseBody ?? 'x')).toBe(true);
    expect(attempt?.responseBody?.length).toBeLessThan(body.length);
    // The sender closed the connection rather than wait for the rest.
    await vi.waitFor(() => expect(receiver.at('/trickle')[0]?.bodyCut).toBe(true));
    expect(receiver.at('/trickle')).toHaveLength(1);
  });

  test('an attempt keeps the first 1,024 bytes of a longer answer, as text fit for a log', async () => {
    const delivery = await pendingDelivery('/long-answer', 0);
    const body = `{"error":"busy",\r\n\t"detail":"${'x'.repeat(5000)}"}`;
    receiver.replyWith(() => ({ status: 503, body }));
    await handler({ Records: [sqsRecord(delivery)] } as SQSEvent, context);
    const record = await findDelivery(tenantOwner(delivery.tenantId), delivery.deliveryId);
    expect(record?.status).toBe('retrying');
    expect(record?.attempts).toEqual([
      expect.objectContaining({ statusCode: 503, responseBody: body.slice(0, maxResponseBodyBytes).replace(/[\r\n\t]/g, ' ') }),
    ]);
  });

  test('a delivery at its largest (every attempt it keeps, the longest URL, a 1 KB answer each) fits its item, then fails without another', async () => {
    const large: Attempt = {
      at: new Date().toISOString(),
      url: `https://hooks.example.com/${'x'.repeat(2048 - 26)}`,
      durationMs: 10_999,
      statusCode: 503,
      responseBody: '\u00e9'.repeat(maxResponseBodyBytes / 2),
    };
    // The last attempt but one, early in its round: the last is recorded, and retried.
    const delivery = await pendingDelivery('/kept-all', maxAttemptsPerDelivery - 1, large, maxAttemptsPerDelivery - 4);
    receiver.replyWith(() => ({ status: 503, body: '\u00e9'.repeat(maxResponseBodyBytes) }));
    // Recorded, then retried: the message's made-up receipt cannot be hidden for the retry (its failure is the batch's).
    await handler({ Records: [sqsRecord(delivery)] } as SQSEvent, context);
    const full = await findDelivery(tenantOwner(delivery.tenantId), delivery.deliveryId);
    expect(full?.status).toBe('retrying');
    expect(full?.attempts).toHaveLength(maxAttemptsPerDelivery);
    expect(Buffer.byteLength(full?.attempts.at(-1)?.responseBody ?? '')).toBe(maxResponseBodyBytes);

    expect((await handler({ Records: [sqsRecord(delivery)] } as SQSEvent, context)).batchItemFailures).toEqual([]);
    expect(receiver.at('/kept-all')).toHaveLength(1);
    const failed = await findDelivery(tenantOwner(delivery.tenantId), delivery.deliveryId);
    expect(failed).toMatchObject({
      status: 'failed',
      failureReason: `A delivery makes at most ${maxAttemptsPerDelivery} attempts; this one has made them`,
    });
    expect(failed?.attempts).toHaveLength(maxAttemptsPerDelivery);
  });

  test('finishing a delivery that expired meanwhile does not recreate it', async () => {
    const tenant = await newTenant((await newClient()).token);
    const expired: AlertDeliveryRecord = {
      tenantId: tenant.id,
      deliveryId: 5,
      alertId: 1,
      webhookId: 'msg_expired',
      trigger: 'fire',
      status: 'queued',
      bytes: 2,
      attempts: [],
      roundStart: 0,
      createdAt: new Date().toISOString(),
      expiresAt: 0,
    };
    const attempt = { at: new Date().toISOString(), durationMs: 3, statusCode: 500 };
    expect(await finishDelivery(expired, 'retrying', attempt, undefined, new Date().toISOString())).toBe(false);
    expect(await finishDelivery(expired, 'failed', attempt, 'x')).toBe(false);
    expect(await findDelivery(tenantOwner(tenant.id), 5)).toBeUndefined();
  });
});
