import { BatchProcessor, EventType, processPartialResponse } from '@aws-lambda-powertools/batch';
import { SendMessageCommand } from '@aws-sdk/client-sqs';
import type { Context, SQSEvent, SQSRecord } from 'aws-lambda';
import { logger } from '#functions/core/observability/logger.ts';
import { putMessageBack, workerHandler } from '#functions/core/api/worker-handler.ts';
import { attemptDelivery } from '#functions/core/alerts/deliverer.ts';
import type { DeliveryMessage } from '#functions/core/alerts/deliveries.ts';
import { webhookConfig } from '#functions/core/alerts/webhook-config.ts';
import { deadLetterQueueUrl, sqs } from '#functions/core/store/queues.ts';

// A function missing its webhook configuration fails at cold start.
webhookConfig();

function parseMessage(body: string): DeliveryMessage | undefined {
  try {
    const message = JSON.parse(body) as { tenantId?: unknown; clientId?: unknown; deliveryId?: unknown } | null;
    // A tenant's delivery or a client's (an integrator's event): one owner, never both.
    const owners = [message?.tenantId, message?.clientId].filter((id) => id !== undefined);
    if (owners.length === 1 && Number.isSafeInteger(owners[0]) && Number.isSafeInteger(message?.deliveryId)) {
      return message as DeliveryMessage;
    }
  } catch {
    // Not JSON: not a delivery either.
  }
  return undefined;
}

/** Moves the message, as received, to the queue's DLQ. */
async function deadLetter(record: SQSRecord): Promise<void> {
  await sqs().send(new SendMessageCommand({ QueueUrl: deadLetterQueueUrl('webhook'), MessageBody: record.body }));
}

/**
 * One delivery attempt. A delivery to retry stays on the queue, hidden until its next attempt: its
 * visibility timeout becomes the retry delay and the message is reported failed, as put back (so
 * not a failure in the deliverer's failure ratio); a message whose endpoint is at its limit or
 * paused is put back the same way, without an attempt. After its last
 * attempt it is moved to the DLQ (as received), and only then marked failed, so a DLQ that cannot
 * be reached leaves it for the next receive. A message that is not a delivery goes to the DLQ at
 * once (deferrals count as receives, so SQS's own redrive comes only after many); an error of ours
 * is a failure left for SQS to retry and, in the end, to dead-letter.
 */
async function deliver(record: SQSRecord, context: Context): Promise<void> {
  const message = parseMessage(record.body);
  if (!message) {
    logger.error('A webhook message that is not a delivery was moved to the DLQ', { messageId: record.messageId });
    await deadLetter(record);
    return;
  }
  let outcome;
  try {
    outcome = await attemptDelivery(message, {
      deadLetter: () => deadLetter(record),
      deadline: Date.now() + context.getRemainingTimeInMillis(),
      receiveCount: Number(record.attributes.ApproximateReceiveCount) || 1,
    });
  } catch (error) {
    logger.error('Handling a webhook message failed', { messageId: record.messageId, error: error as Error });
    throw error;
  }
  if (outcome.kind !== 'retry' && outcome.kind !== 'defer') return;
  await putMessageBack(context, 'webhook', record, outcome.delaySeconds, 'The delivery is retried when the message reappears');
}

/**
 * Webhook queue consumer (partial batch responses): the batch's deliveries go out in parallel. A
 * batch whose records all failed (all of them retries, say) is reported like any other, not
 * thrown: a throw would count as an error of the function (its alarm) for what is routine.
 */
export const handler = workerHandler((event: SQSEvent, context) =>
  // A processor per invocation: it holds the batch's state, which invocations sharing a process must not share.
  processPartialResponse(event, (record: SQSRecord) => deliver(record, context), new BatchProcessor(EventType.SQS), {
    context,
    throwOnFullBatchFailure: false,
  }),
);
