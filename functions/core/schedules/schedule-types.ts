/**
 * The schedule file (spec 2.7) as TypeScript types: those generated from
 * schemas/schedule.v2.schema.json, under the names the code reads them by. Triggers may carry extra
 * properties; the engine reads only the ones their schema names.
 */
import type { ScheduleV2Body, Trigger } from '#functions/core/api/validators/schedule.v2.cjs';

export type { Trigger };

/** Runs every `period` hours (Hour) or minutes (Minute) inside the daily window `start_time..end_time`. */
export type WindowTrigger = Extract<Trigger, { type: 'Hour' | 'Minute' }>;

/** Once a day at `start_when`. */
export type DayTrigger = Extract<Trigger, { type: 'Day' }>;

/** Once a week on weekday `period` (0 = Sunday … 6 = Saturday) at `start_when`. */
export type WeekTrigger = Extract<Trigger, { type: 'Week' }>;

/** Once a month on day `period` (1–31, clamped to the month's last day) at `start_when`. */
export type MonthTrigger = Extract<Trigger, { type: 'Month' }>;

export type ScheduleFile = ScheduleV2Body;
export type ScheduleBody = ScheduleFile['body'];
