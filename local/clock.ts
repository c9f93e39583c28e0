import type { Context, ScheduledEvent } from 'aws-lambda';
import type { TimedFunction } from '#functions/routes.ts';
import { invoke } from './lambda-context.ts';

type TimedHandler = (event: ScheduledEvent, context: Context) => Promise<unknown>;

export interface Clock {
  stop(): Promise<void>;
}

/**
 * When a timer next ticks after `now` (ms since the epoch): the next whole multiple of its period, second 0, which is
 * when its EventBridge rule's cron expression (lib/timed-workers.ts timerSchedule: every n-th minute from the hour,
 * n dividing 60) runs it on AWS.
 */
export const nextTick = (now: number, everyMinutes: number) =>
  (Math.floor(now / (everyMinutes * 60_000)) + 1) * everyMinutes * 60_000;

/**
 * The tick after the one that ran at `ran`, the wall clock reading `now`: never `ran` again, though a timer may end
 * a millisecond before the wall clock reaches the instant it was set for.
 */
export const tickAfter = (ran: number, now: number, everyMinutes: number) => nextTick(Math.max(now, ran), everyMinutes);

/**
 * Invokes a timed function at every whole multiple of its period, as its EventBridge rule does on
 * AWS. Like the rule, it does not wait for the previous invocation to end.
 */
export function startClock(options: { timed: TimedFunction; log?: boolean }): Clock {
  const { timed } = options;
  const handlerModule = import(new URL(`../functions/workers/${timed.handler}.ts`, import.meta.url).href) as Promise<{
    handler: TimedHandler;
  }>;
  const running = new Set<Promise<void>>();
  let timer: NodeJS.Timeout | undefined;
  const tick = (at: number) => {
    const event = {
      version: '0',
      id: crypto.randomUUID(),
      'detail-type': 'Scheduled Event',
      source: 'aws.events',
      account: '000000000000',
      time: new Date(at).toISOString().replace(/\.\d{3}Z$/, 'Z'),
      region: 'local',
      resources: [`arn:aws:events:local:000000000000:rule/${timed.handler}`],
      detail: {},
    } as ScheduledEvent;
    const invocation = handlerModule
      .then(({ handler }) => invoke(handler, event, timed.handler, timed.timeoutSeconds * 1000))
      .then((result) => {
        if (options.log) console.log(`${timed.handler} ${event.time} ${JSON.stringify(result)}`);
      })
      .catch((error: unknown) => console.error(`${timed.handler} failed`, error))
      .finally(() => running.delete(invocation));
    running.add(invocation);
  };
  /** Schedules the tick `next`, and from it the one after. */
  const scheduleNext = (next: number) => {
    timer = setTimeout(() => {
      tick(next);
      scheduleNext(tickAfter(next, Date.now(), timed.everyMinutes));
    }, next - Date.now());
    // The clock alone does not keep the process alive.
    timer.unref();
  };
  scheduleNext(nextTick(Date.now(), timed.everyMinutes));
  return {
    stop: async () => {
      clearTimeout(timer);
      await Promise.all(running);
    },
  };
}
