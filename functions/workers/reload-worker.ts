import type { SQSBatchItemFailure, SQSBatchResponse, SQSEvent } from 'aws-lambda';
import { logger } from '../core/api/logger.ts';
import { config } from '../core/config.ts';
import type { LoadMessage } from '../core/reload/reload.ts';
import { recordDispatchedRun } from '../core/reload/runs.ts';

// A function missing its configuration fails at cold start.
config();

/** A message that is not a load is a failure: retried, then left in the DLQ for an operator. */
function parseLoad(body: string): LoadMessage {
  const load = JSON.parse(body) as Partial<LoadMessage>;
  const integers = [load.tenantId, load.agentId, load.flowId];
  if (!integers.every(Number.isSafeInteger) || typeof load.deduplicationId !== 'string' || typeof load.context !== 'string') {
    throw new Error('The message is not a load');
  }
  return load as LoadMessage;
}

/**
 * Reload queue consumer (FIFO, partial batch responses): records each load as a run dispatched to
 * its agent. When a message fails, it and the later messages of its group are reported failed, so
 * SQS redelivers them in order; the other groups' messages are done.
 */
export const handler = async (event: SQSEvent): Promise<SQSBatchResponse> => {
  const failedGroups = new Set<string>();
  const batchItemFailures: SQSBatchItemFailure[] = [];
  for (const record of event.Records) {
    const group = record.attributes.MessageGroupId ?? record.messageId;
    if (failedGroups.has(group)) {
      batchItemFailures.push({ itemIdentifier: record.messageId });
      continue;
    }
    try {
      const load = parseLoad(record.body);
      const outcome = await recordDispatchedRun(load);
      logger.info('Load handled', {
        messageId: record.messageId,
        tenantId: load.tenantId,
        agentId: load.agentId,
        flowId: load.flowId,
        outcome,
      });
    } catch (error) {
      logger.error('Recording a load failed; it will be retried', {
        messageId: record.messageId,
        receiveCount: record.attributes.ApproximateReceiveCount,
        error: error as Error,
      });
      failedGroups.add(group);
      batchItemFailures.push({ itemIdentifier: record.messageId });
    }
  }
  return { batchItemFailures };
};
