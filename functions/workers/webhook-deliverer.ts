import { ChangeMessageVisibilityCommand, SendMessageCommand } from '@aws-sdk/client-sqs';
import type { SQSBatchItemFailure, SQSBatchResponse, SQSEvent, SQSRecord } from 'aws-lambda';
import { logger } from '../core/api/logger.ts';
import { publishMetrics } from '../core/api/metrics.ts';
import { attemptDelivery } from '../core/alerts/deliverer.ts';
import type { DeliveryMessage } from '../core/alerts/deliveries.ts';
import { webhookConfig } from '../core/alerts/webhook-config.ts';
import { config } from '../core/config.ts';
import { deadLetterQueueUrl, queueUrl, sqs } from '../core/store/queues.ts';

// A function missing its configuration fails at cold start.
config();
webhookConfig();

function parseMessage(body: string): DeliveryMessage {
  const message = JSON.parse(body) as Partial<DeliveryMessage>;
  if (!Number.isSafeInteger(message.tenantId) || !Number.isSafeInteger(message.deliveryId)) {
    throw new Error('The message is not a delivery');
  }
  return message as DeliveryMessage;
}

/**
 * Webhook queue consumer (partial batch responses). The batch's deliveries go out in parallel. A
 * delivery to retry stays on the queue, hidden until its next attempt (its visibility timeout is
 * the retry delay); after its last attempt it is moved to the DLQ (as received), and only then
 * marked failed, so a DLQ that cannot be reached leaves it for the next receive. A message that is not a
 * delivery, or an error of ours, is left for SQS to retry and, in the end, to dead-letter.
 */
export const handler = async (event: SQSEvent): Promise<SQSBatchResponse> => {
  const failures = await Promise.all(event.Records.map((record) => handleRecord(record)));
  publishMetrics();
  return { batchItemFailures: failures.filter((failure): failure is SQSBatchItemFailure => failure !== undefined) };
};

async function handleRecord(record: SQSRecord): Promise<SQSBatchItemFailure | undefined> {
  try {
    const outcome = await attemptDelivery(parseMessage(record.body), {
      deadLetter: async () => {
        await sqs().send(new SendMessageCommand({ QueueUrl: deadLetterQueueUrl('webhook'), MessageBody: record.body }));
      },
    });
    if (outcome.kind !== 'retry') return undefined;
    await sqs().send(
      new ChangeMessageVisibilityCommand({
        QueueUrl: queueUrl('webhook'),
        ReceiptHandle: record.receiptHandle,
        VisibilityTimeout: outcome.delaySeconds,
      }),
    );
  } catch (error) {
    logger.error('Handling a webhook message failed', { messageId: record.messageId, error: error as Error });
  }
  return { itemIdentifier: record.messageId };
}
