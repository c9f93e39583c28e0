import type { Context, ScheduledEvent } from 'aws-lambda';
import { publishMetrics } from '../core/api/metrics.ts';
import { config } from '../core/config.ts';
import { dispatchSettings } from '../core/schedules/dispatch-settings.ts';
import { dispatchDueSchedules, type TickSummary } from '../core/schedules/dispatcher.ts';

// A function missing its configuration fails at cold start.
config();
dispatchSettings();

/** Time kept back from the function's timeout: the pages in flight finish and the cursors are saved. */
const reserveMs = 15_000;

/**
 * Invoked every minute by an EventBridge rule (the twin's clock locally). The tick is the time of
 * the invocation, not the event's: a late or repeated invocation lists what is due now, and the
 * slot claims make a repeated tick harmless. It lists until `reserveMs` before its timeout; what is
 * left, the next tick continues.
 */
export const handler = async (_event: ScheduledEvent, context: Context): Promise<TickSummary> => {
  try {
    return await dispatchDueSchedules(Date.now(), { deadline: Date.now() + context.getRemainingTimeInMillis() - reserveMs });
  } finally {
    publishMetrics();
  }
};
