/**
 * The timers run on AWS when their cron expression says, and on the twin when its clock says: the same instants.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { timedFunctions } from '#functions/routes.ts';
import { timerRetries, timerSchedule } from '#lib/timed-workers.ts';
import { nextTick, tickAfter } from '#local/clock.ts';

const hourDivisors = [1, 2, 3, 4, 5, 6, 10, 12, 15, 20, 30, 60];

describe('timer schedules', () => {
  it('run every timer of the route table at second 0 of its minutes, never at a rate fixed by when the rule was made', () => {
    for (const timed of timedFunctions) expect(timerSchedule(timed).expressionString).toMatch(/^cron\(/);
    expect(timerSchedule({ handler: 'every-minute', everyMinutes: 1 }).expressionString).toBe('cron(* * * * ? *)');
    expect(timerSchedule({ handler: 'every-5', everyMinutes: 5 }).expressionString).toBe('cron(*/5 * * * ? *)');
    expect(timerSchedule({ handler: 'hourly', everyMinutes: 60 }).expressionString).toBe('cron(0 * * * ? *)');
  });

  it('refuse a period that does not divide an hour: its cron minutes would not be evenly spaced', () => {
    for (const everyMinutes of [0, 7, 45, 90, 1.5])
      expect(() => timerSchedule({ handler: 'odd', everyMinutes })).toThrow(/everyMinutes must divide an hour/);
  });

  it('tick on the twin at exactly the minutes the cron expression names, within one period after now', () => {
    fc.assert(
      fc.property(fc.constantFrom(...hourDivisors), fc.integer({ min: 0, max: 4_102_444_800_000 }), (everyMinutes, now) => {
        const tick = nextTick(now, everyMinutes);
        expect(tick).toBeGreaterThan(now);
        expect(tick - now).toBeLessThanOrEqual(everyMinutes * 60_000);
        const at = new Date(tick);
        expect([at.getUTCSeconds(), at.getUTCMilliseconds(), at.getUTCMinutes() % everyMinutes]).toEqual([0, 0, 0]);
      }),
    );
  });

  it('tick on the twin once per instant, though a timer ends a millisecond before the wall clock reaches it', () => {
    const ran = Date.UTC(2026, 10, 26, 12, 0);
    expect(tickAfter(ran, ran - 1, 1)).toBe(ran + 60_000);
    expect(tickAfter(ran, ran + 5, 5)).toBe(ran + 5 * 60_000);
    // A wall clock past several periods (a stalled process) takes the next one from now, not each one missed.
    expect(tickAfter(ran, ran + 150_000, 1)).toBe(ran + 180_000);
  });

  it('never retry a tick, and drop one older than its period: the next tick redoes the work', () => {
    for (const timed of timedFunctions) {
      const retries = timerRetries(timed);
      expect(retries.retryAttempts).toBe(0);
      expect(retries.maxEventAge.toSeconds()).toBe(timed.everyMinutes * 60);
    }
  });
});
