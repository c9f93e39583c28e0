import { BatchProcessor, EventType, processPartialResponse } from '@aws-lambda-powertools/batch';
import type { SQSEvent, SQSRecord } from 'aws-lambda';
import { logger } from '#functions/core/observability/logger.ts';
import { workerHandler } from '#functions/core/api/worker-handler.ts';
import { dispatchSettings } from '#functions/core/schedules/dispatch-settings.ts';
import { fireDueSchedules, type FlowTargetsCache, parseFireMessage } from '#functions/core/schedules/fire.ts';

// Settings out of their limits fail at cold start.
dispatchSettings();

/**
 * Fire queue consumer (partial batch responses): each message holds up to ten schedules a tick
 * found due; they fire in parallel, and the batch's messages too. A message any of whose schedules
 * could not be handled is reported failed and comes back after the visibility timeout; the
 * schedules it had already fired are then skipped, since their slot is claimed.
 */
export const handler = workerHandler((event: SQSEvent, context) => {
  // One read of each tenant's flows, connections and agents for the whole batch.
  const targets: FlowTargetsCache = new Map();
  const fireRecord = async (record: SQSRecord) => {
    const outcomes = await fireDueSchedules(parseFireMessage(record.body), targets);
    logger.info('Fire message handled', { messageId: record.messageId, outcomes });
  };
  // A processor per invocation: on a multi-concurrency runtime its state lives in the invocation's store.
  return processPartialResponse(event, fireRecord, new BatchProcessor(EventType.SQS), { context });
});
