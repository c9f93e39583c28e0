import type { ScheduledEvent } from 'aws-lambda';
import { workerHandler } from '#functions/core/api/worker-handler.ts';
import { dispatchSettings } from '#functions/core/schedules/dispatch-settings.ts';
import { dispatchDueSchedules } from '#functions/core/schedules/dispatcher.ts';

// Settings out of their limits fail at cold start.
dispatchSettings();

/** Time kept back from the function's timeout: the pages in flight finish and the cursors are saved. */
const reserveMs = 15_000;

/**
 * Invoked every minute by an EventBridge rule (the twin's clock locally). The tick is the time of
 * the invocation, not the event's: a late or repeated invocation lists what is due now, and the
 * slot claims make a repeated tick harmless. It lists until `reserveMs` before its timeout; what is
 * left, the next tick continues.
 */
export const handler = workerHandler((_event: ScheduledEvent, context) =>
  dispatchDueSchedules(Date.now(), { deadline: Date.now() + context.getRemainingTimeInMillis() - reserveMs }),
);
