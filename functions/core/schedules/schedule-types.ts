/**
 * The schedule file (spec 2.7, schemas/schedule.v2.schema.json) as TypeScript types. Triggers
 * may carry extra properties; the engine reads only the ones named here.
 */

/** `HH:MM`, 24-hour, local wall time in the schedule's time zone (hour may have one digit). */
export type LocalTime = string;

/** Runs every `period` hours (Hour) or minutes (Minute) inside the daily window `start_time..end_time`. */
export interface WindowTrigger {
  type: 'Hour' | 'Minute';
  period: number;
  /** ISO 8601 date-time; without an offset it is local to the schedule's time zone. No slot before it. */
  start_when: string;
  start_time: LocalTime;
  end_time: LocalTime;
}

/** Once a day at `start_when`. */
export interface DayTrigger {
  type: 'Day';
  start_when: LocalTime;
}

/** Once a week on weekday `period` (0 = Sunday … 6 = Saturday) at `start_when`. */
export interface WeekTrigger {
  type: 'Week';
  period: number;
  start_when: LocalTime;
}

/** Once a month on day `period` (1–31, clamped to the month's last day) at `start_when`. */
export interface MonthTrigger {
  type: 'Month';
  period: number;
  start_when: LocalTime;
}

export type Trigger = WindowTrigger | DayTrigger | WeekTrigger | MonthTrigger;

export interface ScheduleFlow {
  flow_etl_id: number;
  context: string;
  [extra: string]: unknown;
}

export interface ScheduleHeader {
  id: number;
  kind?: 'schedule';
  nome?: string;
  description?: string;
  labels?: Record<string, string>;
}

export interface ScheduleBody {
  createdAt?: string;
  createdBy?: string;
  updatedAt?: string;
  updatedBy?: string;
  nome: string;
  ativo: boolean;
  timezone: string;
  version?: number;
  flows: ScheduleFlow[];
  triggers: Trigger[];
  tags?: string[];
  [extra: string]: unknown;
}

export interface ScheduleFile {
  fileName?: string;
  header: ScheduleHeader;
  body: ScheduleBody;
}
