import { BatchProcessor, EventType, processPartialResponse } from '@aws-lambda-powertools/batch';
import { ChangeMessageVisibilityCommand, SendMessageCommand } from '@aws-sdk/client-sqs';
import type { SQSEvent, SQSRecord } from 'aws-lambda';
import { logger } from '#functions/core/observability/logger.ts';
import { workerHandler } from '#functions/core/api/worker-handler.ts';
import { attemptDelivery } from '#functions/core/alerts/deliverer.ts';
import type { DeliveryMessage } from '#functions/core/alerts/deliveries.ts';
import { webhookConfig } from '#functions/core/alerts/webhook-config.ts';
import { deadLetterQueueUrl, queueUrl, sqs } from '#functions/core/store/queues.ts';

// A function missing its webhook configuration fails at cold start.
webhookConfig();

function parseMessage(body: string): DeliveryMessage {
  const message = JSON.parse(body) as Partial<DeliveryMessage>;
  if (!Number.isSafeInteger(message.tenantId) || !Number.isSafeInteger(message.deliveryId)) {
    throw new Error('The message is not a delivery');
  }
  return message as DeliveryMessage;
}

/**
 * One delivery attempt. A delivery to retry stays on the queue, hidden until its next attempt: its
 * visibility timeout becomes the retry delay and the message is reported failed. After its last
 * attempt it is moved to the DLQ (as received), and only then marked failed, so a DLQ that cannot
 * be reached leaves it for the next receive. A message that is not a delivery, or an error of
 * ours, is a failure left for SQS to retry and, in the end, to dead-letter.
 */
async function deliver(record: SQSRecord): Promise<void> {
  try {
    const outcome = await attemptDelivery(parseMessage(record.body), {
      deadLetter: async () => {
        await sqs().send(new SendMessageCommand({ QueueUrl: deadLetterQueueUrl('webhook'), MessageBody: record.body }));
      },
    });
    if (outcome.kind !== 'retry') return;
    await sqs().send(
      new ChangeMessageVisibilityCommand({
        QueueUrl: queueUrl('webhook'),
        ReceiptHandle: record.receiptHandle,
        VisibilityTimeout: outcome.delaySeconds,
      }),
    );
  } catch (error) {
    logger.error('Handling a webhook message failed', { messageId: record.messageId, error: error as Error });
    throw error;
  }
  throw new Error('The delivery is retried when the message reappears');
}

/**
 * Webhook queue consumer (partial batch responses): the batch's deliveries go out in parallel. A
 * batch whose records all failed (all of them retries, say) is reported like any other, not
 * thrown: a throw would count as an error of the function (its alarm) for what is routine.
 */
export const handler = workerHandler((event: SQSEvent, context) =>
  // A processor per invocation: it holds the batch's state, which invocations sharing a process must not share.
  processPartialResponse(event, deliver, new BatchProcessor(EventType.SQS), { context, throwOnFullBatchFailure: false }),
);
