import { DeleteMessageCommand, ReceiveMessageCommand, SendMessageCommand, SQSClient } from '@aws-sdk/client-sqs';
import type { Context, SQSEvent, SQSRecord } from 'aws-lambda';
import { describe, expect, inject, test } from 'vitest';
import type { LoadMessage } from '#functions/core/reload/reload.ts';
import { listRuns } from '#functions/core/reload/runs.ts';
import { getItem } from '#functions/core/store/dynamo.ts';
import * as stored from '#functions/core/store/entity-declarations.ts';
import { retentionSettingLimits } from '#functions/core/store/retention.ts';
import { handler } from '#functions/workers/reload-worker.ts';
import { newClient, newTenant } from '#test/support/api.ts';
import { eventually } from '#test/support/templates.ts';

const load = (tenantId: number, flowId: number, batchId = crypto.randomUUID()): LoadMessage => ({
  batchId,
  deduplicationId: `${batchId}-${flowId}`,
  tenantId,
  agentId: 1,
  flowId,
  context: 'full',
  requestedAt: new Date().toISOString(),
});

const context = {
  awsRequestId: 'reload-request',
  functionName: 'reload-worker',
  getRemainingTimeInMillis: () => 30_000,
} as Context;

const record = (body: unknown, group: string): SQSRecord =>
  ({
    messageId: crypto.randomUUID(),
    receiptHandle: 'r',
    body: typeof body === 'string' ? body : JSON.stringify(body),
    attributes: { MessageGroupId: group, ApproximateReceiveCount: '1' },
  }) as unknown as SQSRecord;

describe('reload worker', () => {
  test('a failed message fails the rest of its FIFO group, not the other groups', async () => {
    const client = await newClient();
    const tenant = await newTenant(client.token);
    const records = [
      record(load(tenant.id, 11), 'a'),
      record('{not json', 'a'),
      record(load(tenant.id, 12), 'a'),
      record(load(tenant.id, 21), 'b'),
    ];
    const result = await handler({ Records: records } as SQSEvent, context);
    expect(result.batchItemFailures).toEqual([
      { itemIdentifier: records[1]?.messageId },
      { itemIdentifier: records[2]?.messageId },
    ]);
    const runs = (await listRuns(tenant.id, {}, 50, undefined)).items;
    expect(runs.map((run) => run.flowId).sort()).toEqual([11, 21]);
  });

  test('a batch that fails whole is reported, not thrown (a throw would be an error of the function)', async () => {
    const client = await newClient();
    const tenant = await newTenant(client.token);
    const records = [record('{not json', 'a'), record(load(tenant.id, 31), 'a')];
    const result = await handler({ Records: records } as SQSEvent, context);
    expect(result.batchItemFailures).toEqual(records.map((entry) => ({ itemIdentifier: entry.messageId })));
    expect((await listRuns(tenant.id, {}, 50, undefined)).items).toEqual([]);
  });

  test('a run keeps no copy of the tenant variables, and expires after runRetentionDays', async () => {
    const client = await newClient();
    const tenant = await newTenant(client.token, { development_variables: { WAREHOUSE: 'north' } });
    const before = Math.floor(Date.now() / 1000);
    await handler({ Records: [record(load(tenant.id, 41), 'g')] } as SQSEvent, context);
    const [run] = (await listRuns(tenant.id, {}, 50, undefined)).items;
    const item = await getItem(stored.run.key({ tenantId: tenant.id, runId: run?.id ?? 0 }));
    expect(item).toMatchObject({ flowId: 41, status: 'dispatched' });
    expect(item).not.toHaveProperty('variables');
    const retention = retentionSettingLimits.runRetentionDays.fallback * 86_400;
    expect(item?.expiresAt).toBeGreaterThanOrEqual(before + retention);
    expect(item?.expiresAt).toBeLessThanOrEqual(Math.floor(Date.now() / 1000) + retention);
  });

  test('a message delivered twice makes one run', async () => {
    const client = await newClient();
    const tenant = await newTenant(client.token);
    const message = load(tenant.id, 5);
    await handler({ Records: [record(message, 'g')] } as SQSEvent, context);
    const again = await handler({ Records: [record(message, 'g')] } as SQSEvent, context);
    expect(again.batchItemFailures).toEqual([]);
    expect((await listRuns(tenant.id, {}, 50, undefined)).items).toHaveLength(1);
  });

  test('through the real queue, a crashing message is redelivered alone until it lands in the DLQ', async () => {
    const client = await newClient();
    const tenant = await newTenant(client.token);
    const sqs = new SQSClient({ endpoint: inject('sqsEndpoint') });
    const poison = `not a load ${crypto.randomUUID()}`;
    const good = load(tenant.id, 7);
    try {
      await sqs.send(
        new SendMessageCommand({
          QueueUrl: inject('queueUrls').reload,
          MessageBody: poison,
          MessageGroupId: 'poison',
          MessageDeduplicationId: crypto.randomUUID(),
        }),
      );
      await sqs.send(
        new SendMessageCommand({
          QueueUrl: inject('queueUrls').reload,
          MessageBody: JSON.stringify(good),
          MessageGroupId: `tenant-${tenant.id}-agent-1`,
          MessageDeduplicationId: good.deduplicationId,
        }),
      );
      // After 5 receives (1 s apart in tests) the queue moves the poison message to the DLQ.
      const deadLetter = await eventually(async () => {
        const received = await sqs.send(
          new ReceiveMessageCommand({
            QueueUrl: inject('deadLetterQueueUrls').reload,
            MaxNumberOfMessages: 10,
            VisibilityTimeout: 0,
          }),
        );
        return received.Messages?.find((message) => message.Body === poison);
      }, 30_000);
      await sqs.send(
        new DeleteMessageCommand({ QueueUrl: inject('deadLetterQueueUrls').reload, ReceiptHandle: deadLetter.ReceiptHandle }),
      );
      // The good message was handled once, and only once, while the poison one kept failing.
      expect((await listRuns(tenant.id, {}, 50, undefined)).items.map((run) => run.flowId)).toEqual([7]);
    } finally {
      sqs.destroy();
    }
  });
});
