import { BatchProcessor, EventType, processPartialResponse } from '@aws-lambda-powertools/batch';
import type { Context, SQSEvent, SQSRecord } from 'aws-lambda';
import { putMessageBack, workerHandler } from '#functions/core/api/worker-handler.ts';
import { logger } from '#functions/core/observability/logger.ts';
import { runRollout } from '#functions/core/rollouts/rollout-runner.ts';
import type { RolloutMessage } from '#functions/core/rollouts/rollouts.ts';

function parseMessage(body: string): RolloutMessage {
  const message = JSON.parse(body) as Partial<RolloutMessage> | null;
  if (!Number.isSafeInteger(message?.clientId) || !Number.isSafeInteger(message?.rolloutId)) {
    throw new Error('The message is not a rollout step');
  }
  return message as RolloutMessage;
}

/**
 * One rollout, worked until the invocation's deadline. While it has more to do, its message is put
 * back, hidden until then (at once after a step, at the next wave's time after a pause) and
 * reported failed as put back, so not a failure of the worker; a message that is not a step, or an
 * error of ours, is a failure left for SQS to retry and, in the end, to dead-letter.
 */
async function work(record: SQSRecord, context: Context): Promise<void> {
  let step;
  try {
    step = await runRollout(parseMessage(record.body), Date.now() + context.getRemainingTimeInMillis());
  } catch (error) {
    logger.error('Working a rollout failed; its message comes back', { messageId: record.messageId, error: error as Error });
    throw error;
  }
  if (step.kind === 'later') {
    await putMessageBack(
      context,
      'rollout',
      record,
      step.delaySeconds,
      "The rollout's next step runs when the message reappears",
    );
  }
}

/** Rollout queue consumer (partial batch responses): each message is one running rollout. */
export const handler = workerHandler((event: SQSEvent, context) =>
  processPartialResponse(event, (record: SQSRecord) => work(record, context), new BatchProcessor(EventType.SQS), {
    context,
    throwOnFullBatchFailure: false,
  }),
);
