import { processPartialResponse, SqsFifoPartialProcessorAsync } from '@aws-lambda-powertools/batch';
import type { SQSEvent, SQSRecord } from 'aws-lambda';
import { logger } from '#functions/core/observability/logger.ts';
import { workerHandler } from '#functions/core/api/worker-handler.ts';
import type { LoadMessage } from '#functions/core/reload/reload.ts';
import { recordDispatchedRun } from '#functions/core/reload/runs.ts';

/** A message that is not a load is a failure: retried, then left in the DLQ for an operator. */
function parseLoad(body: string): LoadMessage {
  const load = JSON.parse(body) as Partial<LoadMessage>;
  const integers = [load.tenantId, load.agentId, load.flowId, load.retryOf ?? 1];
  const strings = [load.deduplicationId, load.context, load.requestId ?? ''];
  if (!integers.every(Number.isSafeInteger) || !strings.every((value) => typeof value === 'string')) {
    throw new Error('The message is not a load');
  }
  return load as LoadMessage;
}

async function recordLoad(record: SQSRecord): Promise<void> {
  try {
    const load = parseLoad(record.body);
    const outcome = await recordDispatchedRun(load);
    logger.info('Load handled', {
      messageId: record.messageId,
      tenantId: load.tenantId,
      agentId: load.agentId,
      flowId: load.flowId,
      // The request that queued it, to follow it from that request's log lines.
      ...(load.requestId === undefined ? {} : { requestId: load.requestId }),
      outcome,
    });
  } catch (error) {
    logger.error('Recording a load failed; it will be retried', {
      messageId: record.messageId,
      receiveCount: record.attributes.ApproximateReceiveCount,
      error: error as Error,
    });
    throw error;
  }
}

/**
 * Reload queue consumer (FIFO, partial batch responses): records each load as a run dispatched to
 * its agent. When a message fails, it and the later messages of its group are reported failed, so
 * SQS redelivers them in order; the other groups' messages are done. A batch that failed whole
 * (a lone poison message) is reported like any other, not thrown: a throw would count as an error
 * of the function (its alarm) for what the queue's retries and DLQ already handle.
 */
export const handler = workerHandler((event: SQSEvent, context) =>
  // A processor per invocation: it holds the batch's state, which invocations sharing a process must not share.
  processPartialResponse(event, recordLoad, new SqsFifoPartialProcessorAsync(), {
    context,
    skipGroupOnError: true,
    throwOnFullBatchFailure: false,
  }),
);
