import { randomUUID } from 'node:crypto';
import { DeleteMessageBatchCommand, type Message, ReceiveMessageCommand, type SQSClient } from '@aws-sdk/client-sqs';
import type { Context, SQSBatchResponse, SQSEvent, SQSRecord } from 'aws-lambda';
import { queueDefinitions } from '#functions/core/store/queue-definitions.ts';
import { sqs as functionsSqs } from '#functions/core/store/queues.ts';
import type { QueueConsumer } from '#functions/routes.ts';
import { CONSUMER_CONCURRENCY } from '#lib/deployment-settings.ts';
import { type FairQueue, startFairQueue } from './fair-queue.ts';
import { answerLikeSqs } from './queue-limits.ts';
import { invoke } from './lambda-context.ts';
import type { LocalQueues } from './queues.ts';

type SqsHandler = (event: SQSEvent, context: Context) => Promise<SQSBatchResponse | void>;

export interface Poller {
  stop(): Promise<void>;
}

/**
 * Batches an event source mapping processes at once on a standard queue with messages waiting:
 * it starts with five, and scales back to five when traffic is low (Lambda Developer Guide,
 * "Configuring scaling behavior for SQS event source mappings"). The twin stays there: AWS then
 * adds up to 300 a minute, which a twin sharing one machine's cores would only turn into contention.
 */
export const startingBatches = 5;

/**
 * The consumer's concurrent batches on the twin: its whole cap (the setting's default) when it
 * reserves that concurrency, which is then always there for it; else where AWS starts, within its cap.
 */
export const twinBatchesOf = (consumer: Pick<QueueConsumer, 'concurrencySetting' | 'reservesConcurrency'>) => {
  const cap = CONSUMER_CONCURRENCY[consumer.concurrencySetting].fallback;
  return consumer.reservesConcurrency ? cap : Math.min(startingBatches, cap);
};

/**
 * Feeds a queue to its consumer as a Lambda event source mapping does: several batches at once
 * (`twinBatchesOf`: one slow batch, a receiver that never answers say, holds only its own), each of
 * up to `batchSize`, the partial batch response honoured (successes deleted, failures left to
 * reappear after the visibility timeout and, past maxReceiveCount, to be moved to the DLQ by the
 * queue). A handler that throws fails the whole batch, as on AWS. A fair queue's messages come
 * through the twin's fair queue (local/fair-queue.ts), in SQS's order: quiet tenants' first.
 */
export function startPoller(options: { consumer: QueueConsumer; queues: LocalQueues; sqs: SQSClient; log?: boolean }): Poller {
  const { consumer, queues, sqs } = options;
  const queueUrl = queues.urls[consumer.queue];
  const handlerModule = import(new URL(`../functions/workers/${consumer.handler}.ts`, import.meta.url).href) as Promise<{
    handler: SqsHandler;
  }>;
  const abort = new AbortController();
  // The functions run in this process: the twin learns the tenant of what they send, and they hear
  // what SQS would answer them.
  queues.groups.track(functionsSqs());
  answerLikeSqs(functionsSqs());
  const fair: FairQueue | undefined = queueDefinitions[consumer.queue].fair
    ? startFairQueue({
        sqs,
        queueUrl,
        visibilityTimeoutSeconds: queues.visibilityTimeoutSeconds[consumer.queue],
        inFlight: () => queues.inFlight(consumer.queue),
        groups: queues.groups,
      })
    : undefined;

  const receive = async (): Promise<Message[]> => {
    if (fair) return fair.take(consumer.batchSize);
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
    return received.Messages ?? [];
  };

  const batches = async (handler: SqsHandler) => {
    while (!abort.signal.aborted) {
      let messages: Message[];
      try {
        messages = await receive();
      } catch (error) {
        if (abort.signal.aborted) break;
        console.error(`poller ${consumer.queue}: receive failed`, error);
        await new Promise((resolve) => setTimeout(resolve, 500));
        continue;
      }
      if (messages.length === 0) continue;
      const records = messages.map((message) => toRecord(message, queueUrl));
      const started = performance.now();
      let failed: Set<string>;
      try {
        const result = await invoke(handler, { Records: records } as SQSEvent, consumer.handler, consumer.timeoutSeconds * 1000);
        failed = new Set((result?.batchItemFailures ?? []).map((failure) => failure.itemIdentifier));
      } catch (error) {
        console.error(`${consumer.handler} failed the whole batch`, error);
        failed = new Set(records.map((record) => record.messageId));
      }
      fair?.processed(messages, performance.now() - started);
      const done = records.filter((record) => !failed.has(record.messageId));
      for (const record of done) queues.groups.forget(record.messageId);
      if (done.length > 0) {
        await sqs
          .send(
            new DeleteMessageBatchCommand({
              QueueUrl: queueUrl,
              Entries: done.map((record, index) => ({ Id: String(index), ReceiptHandle: record.receiptHandle })),
            }),
          )
          .catch((error: unknown) => console.error(`poller ${consumer.queue}: delete failed`, error));
      }
      if (options.log) {
        console.log(
          `${consumer.handler}: ${done.length} done, ${failed.size} to retry${fair ? `, ${fair.waiting()} waiting` : ''}`,
        );
      }
    }
  };

  const running = handlerModule.then(({ handler }) =>
    Promise.all(Array.from({ length: twinBatchesOf(consumer) }, () => batches(handler))),
  );
  return {
    stop: async () => {
      abort.abort();
      await fair?.stop();
      await running.catch(() => undefined);
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
