import { randomUUID } from 'node:crypto';
import { DeleteMessageBatchCommand, type Message, ReceiveMessageCommand, type SQSClient } from '@aws-sdk/client-sqs';
import type { Context, SQSBatchResponse, SQSEvent, SQSRecord } from 'aws-lambda';
import { invoke } from './lambda-context.ts';
import type { QueueConsumer } from '#functions/routes.ts';

type SqsHandler = (event: SQSEvent, context: Context) => Promise<SQSBatchResponse | void>;

export interface Poller {
  stop(): Promise<void>;
}

/**
 * Feeds a queue to its consumer as a Lambda event source mapping does: batches of up to
 * `batchSize`, the partial batch response honoured (successes deleted, failures left to reappear
 * after the visibility timeout and, past maxReceiveCount, to be moved to the DLQ by the queue).
 * A handler that throws fails the whole batch, as on AWS.
 */
export function startPoller(options: { consumer: QueueConsumer; queueUrl: string; sqs: SQSClient; log?: boolean }): Poller {
  const { consumer, queueUrl, sqs } = options;
  const handlerModule = import(new URL(`../functions/workers/${consumer.handler}.ts`, import.meta.url).href) as Promise<{
    handler: SqsHandler;
  }>;
  const abort = new AbortController();
  const loop = (async () => {
    const { handler } = await handlerModule;
    while (!abort.signal.aborted) {
      let messages: Message[] = [];
      try {
        const received = await sqs.send(
          new ReceiveMessageCommand({
            QueueUrl: queueUrl,
            MaxNumberOfMessages: consumer.batchSize,
            WaitTimeSeconds: 1,
            MessageSystemAttributeNames: ['All'],
            MessageAttributeNames: ['All'],
          }),
          { abortSignal: abort.signal },
        );
        messages = received.Messages ?? [];
      } catch (error) {
        if (abort.signal.aborted) break;
        console.error(`poller ${consumer.queue}: receive failed`, error);
        await new Promise((resolve) => setTimeout(resolve, 500));
        continue;
      }
      if (messages.length === 0) continue;
      const records = messages.map((message) => toRecord(message, queueUrl));
      let failed: Set<string>;
      try {
        const result = await invoke(handler, { Records: records } as SQSEvent, consumer.handler, consumer.timeoutSeconds * 1000);
        failed = new Set((result?.batchItemFailures ?? []).map((failure) => failure.itemIdentifier));
      } catch (error) {
        console.error(`${consumer.handler} failed the whole batch`, error);
        failed = new Set(records.map((record) => record.messageId));
      }
      const done = records.filter((record) => !failed.has(record.messageId));
      if (done.length > 0) {
        await sqs.send(
          new DeleteMessageBatchCommand({
            QueueUrl: queueUrl,
            Entries: done.map((record, index) => ({ Id: String(index), ReceiptHandle: record.receiptHandle })),
          }),
        );
      }
      if (options.log) console.log(`${consumer.handler}: ${done.length} done, ${failed.size} to retry`);
    }
  })();
  return {
    stop: async () => {
      abort.abort();
      await loop.catch(() => undefined);
    },
  };
}

function toRecord(message: Message, queueUrl: string): SQSRecord {
  const attributes = message.Attributes ?? {};
  const queueName = queueUrl.split('/').at(-1) ?? '';
  return {
    messageId: message.MessageId ?? randomUUID(),
    receiptHandle: message.ReceiptHandle ?? '',
    body: message.Body ?? '',
    attributes: {
      ApproximateReceiveCount: attributes.ApproximateReceiveCount ?? '1',
      SentTimestamp: attributes.SentTimestamp ?? String(Date.now()),
      SenderId: attributes.SenderId ?? 'local',
      ApproximateFirstReceiveTimestamp: attributes.ApproximateFirstReceiveTimestamp ?? String(Date.now()),
      ...(attributes.MessageGroupId ? { MessageGroupId: attributes.MessageGroupId } : {}),
      ...(attributes.MessageDeduplicationId ? { MessageDeduplicationId: attributes.MessageDeduplicationId } : {}),
      ...(attributes.SequenceNumber ? { SequenceNumber: attributes.SequenceNumber } : {}),
    },
    messageAttributes: {},
    md5OfBody: message.MD5OfBody ?? '',
    eventSource: 'aws:sqs',
    eventSourceARN: `arn:aws:sqs:us-east-1:000000000000:${queueName}`,
    awsRegion: 'us-east-1',
  };
}
