import type { ScheduledEvent } from 'aws-lambda';
import { workerHandler } from '#functions/core/api/worker-handler.ts';
import { finishFollowUps } from '#functions/core/follow-ups/sweeper.ts';

/** Time kept back from the function's timeout: the follow-up in progress finishes. */
const reserveMs = 15_000;

/**
 * Invoked every minute by an EventBridge rule (the twin's clock locally): finishes what requests
 * left behind after their main write (a tenant's template, a delivery to send, a deletion's sweep).
 */
export const handler = workerHandler((_event: ScheduledEvent, context) =>
  finishFollowUps(Date.now(), Date.now() + context.getRemainingTimeInMillis() - reserveMs),
);
