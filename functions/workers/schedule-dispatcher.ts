import type { ScheduledEvent } from 'aws-lambda';
import { publishMetrics } from '../core/api/metrics.ts';
import { config } from '../core/config.ts';
import { dispatchDueSchedules, type TickSummary } from '../core/schedules/dispatcher.ts';

// A function missing its configuration fails at cold start.
config();

/**
 * Invoked every minute by an EventBridge rule (the twin's clock locally). The tick is the time of
 * the invocation, not the event's: a late or repeated invocation fires what is due now, and the
 * slot claims make a repeated tick harmless.
 */
export const handler = async (_event: ScheduledEvent): Promise<TickSummary> => {
  try {
    return await dispatchDueSchedules(Date.now());
  } finally {
    publishMetrics();
  }
};
