/**
 * The trigger engine as it was before fires were computed incrementally (kept verbatim apart from
 * this comment and the names): each fire re-parses every trigger and re-scans from the previous
 * fire. Slow, but simple; test/unit/next-fires-incremental.test.ts checks the engine against it.
 * It knows no horizon: compare only the fires it gives before the horizon's end.
 */
import { DateTime, IANAZone } from 'luxon';
import type { DayTrigger, MonthTrigger, Trigger, WeekTrigger, WindowTrigger } from '#functions/core/schedules/schedule-types.ts';

const MINUTE_MS = 60_000;
const DAY_MS = 86_400_000;
const MINUTES_PER_DAY = 1440;
/** A skipped wall time moves to the first valid minute at most this many minutes later (real gaps are 30 or 60). */
const MAX_GAP_MINUTES = 180;
/** Window days searched ahead of the starting point; any real window fires within a few days. */
const MAX_WINDOW_DAYS = 400;
/** Months searched for a Month trigger; with clamping, every month has a fire. */
const MAX_MONTHS = 14;

const LOCAL_TIME = /^([01]?[0-9]|2[0-3]):([0-5][0-9])$/;
/** The schema's date-time (spec 2.7), with offsets limited to real ones (±23:59). */
const ISO_DATE_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(?::\d{2}(?:\.\d{1,9})?)?(Z|[+-](?:[01]\d|2[0-3]):[0-5]\d)?$/;

/** The first fire instant strictly after `after` (epoch ms), or undefined when the triggers never fire again. */
export function referenceNextFire(triggers: readonly Trigger[], timezone: string, after: number): number | undefined {
  if (!Number.isFinite(after) || !IANAZone.create(timezone).isValid) return undefined;
  let best: number | undefined;
  for (const trigger of triggers) {
    const fire = nextTriggerFire(trigger, timezone, after);
    if (fire !== undefined && (best === undefined || fire < best)) best = fire;
  }
  return best;
}

/** The next `count` fire instants strictly after `after`, increasing, no duplicates (several triggers on one instant = one fire). */
export function referenceNextFires(triggers: readonly Trigger[], timezone: string, after: number, count: number): number[] {
  const fires: number[] = [];
  let cursor = after;
  while (fires.length < count) {
    const fire = referenceNextFire(triggers, timezone, cursor);
    if (fire === undefined) break;
    fires.push(fire);
    cursor = fire;
  }
  return fires;
}

/**
 * Parses an ISO 8601 date-time; without offset/Z it is local to `timezone`. Returns epoch ms or undefined when invalid.
 *
 * A local date-time is read like a trigger time: when it occurs twice (DST overlap) it is the first occurrence;
 * when the clock skips it (DST gap) it is the first valid minute after it, the moment the clock jumps.
 */
function parseStartWhen(value: string, timezone: string): number | undefined {
  const match = ISO_DATE_TIME.exec(value);
  if (!match) return undefined;
  if (match[1] !== undefined) {
    const withOffset = DateTime.fromISO(value, { setZone: true });
    return withOffset.isValid ? withOffset.toMillis() : undefined;
  }
  if (!IANAZone.create(timezone).isValid) return undefined;
  // Read in UTC, the text's date and time become a wall time (Luxon rejects 02-30, 23:60...).
  const local = DateTime.fromISO(value, { zone: 'utc' });
  if (!local.isValid) return undefined;
  const wallMinute = local.startOf('minute').toMillis();
  const exact = instantOfWall(wallMinute, timezone);
  // Seconds and milliseconds ride along when the minute exists; a skipped minute jumps to the gap's end.
  if (exact !== undefined) return exact + (local.toMillis() - wallMinute);
  return firstValidInstantFrom(wallMinute, timezone);
}

/** Parses HH:MM to {hour, minute} (undefined when invalid). */
function parseLocalTime(value: string): { hour: number; minute: number } | undefined {
  const match = LOCAL_TIME.exec(value);
  if (!match) return undefined;
  return { hour: Number(match[1]), minute: Number(match[2]) };
}

function nextTriggerFire(trigger: Trigger, zone: string, after: number): number | undefined {
  switch (trigger.type) {
    case 'Hour':
    case 'Minute':
      return nextWindowFire(trigger, zone, after);
    case 'Day':
      return nextDayFire(trigger, zone, after);
    case 'Week':
      return nextWeekFire(trigger, zone, after);
    case 'Month':
      return nextMonthFire(trigger, zone, after);
    default:
      return undefined;
  }
}

// ---------------------------------------------------------------------------------------------
// Wall time <-> instant. The only two places that consult the time zone's offsets (through Luxon).
// ---------------------------------------------------------------------------------------------

/** The wall time the clock shows in `zone` at `instant`. */
function wallOf(instant: number, zone: string): number {
  return DateTime.fromMillis(instant, { zone }).setZone('utc', { keepLocalTime: true }).toMillis();
}

/**
 * The instant the clock in `zone` shows `wall`; the earlier one when it shows it twice (DST overlap);
 * undefined when it never shows it (DST gap).
 */
function instantOfWall(wall: number, zone: string): number | undefined {
  const asked = DateTime.fromMillis(wall, { zone: 'utc' }).toObject();
  const built = DateTime.fromObject(asked, { zone });
  // In a gap Luxon silently moves the time forward, so what it built shows another wall time.
  const shown = built.toObject();
  const units = ['year', 'month', 'day', 'hour', 'minute', 'second', 'millisecond'] as const;
  if (!built.isValid || units.some((unit) => shown[unit] !== asked[unit])) return undefined;
  // In an overlap Luxon picks the occurrence whose offset matches the offset in force *now* (its guess),
  // so its choice changes with the season the code runs in. getPossibleOffsets lists both occurrences.
  return Math.min(...built.getPossibleOffsets().map((candidate) => candidate.toMillis()));
}

/** `wall` as an instant or, when the clock skips it, the first later whole minute the clock shows. */
function firstValidInstantFrom(wall: number, zone: string): number | undefined {
  for (let step = 0; step <= MAX_GAP_MINUTES; step++) {
    const instant = instantOfWall(wall + step * MINUTE_MS, zone);
    if (instant !== undefined) return instant;
  }
  return undefined;
}

/** Midnight (wall time) of the local date whose wall time is `wall`. */
function startOfWallDay(wall: number): number {
  return DateTime.fromMillis(wall, { zone: 'utc' }).startOf('day').toMillis();
}

function minuteOfDay(time: { hour: number; minute: number }): number {
  return time.hour * 60 + time.minute;
}

// ---------------------------------------------------------------------------------------------
// Day, Week, Month: one wall time per matching date.
// ---------------------------------------------------------------------------------------------

/**
 * The first fire after `after` among the dates from the day before `after`'s local date on. The search starts
 * one day early because a fire pushed forward by a gap can land on the next local date.
 */
function nextDailyFire(
  time: string,
  zone: string,
  after: number,
  days: number,
  matches: (midnight: number) => boolean,
): number | undefined {
  const localTime = parseLocalTime(time);
  if (!localTime) return undefined;
  const firstDay = startOfWallDay(wallOf(after, zone)) - DAY_MS;
  for (let i = 0; i < days; i++) {
    const midnight = firstDay + i * DAY_MS;
    if (!matches(midnight)) continue;
    const fire = firstValidInstantFrom(midnight + minuteOfDay(localTime) * MINUTE_MS, zone);
    if (fire !== undefined && fire > after) return fire;
  }
  return undefined;
}

function nextDayFire(trigger: DayTrigger, zone: string, after: number): number | undefined {
  return nextDailyFire(trigger.start_when, zone, after, 4, () => true);
}

function nextWeekFire(trigger: WeekTrigger, zone: string, after: number): number | undefined {
  if (!Number.isInteger(trigger.period) || trigger.period < 0 || trigger.period > 6) return undefined;
  // Luxon numbers weekdays 1 (Monday) to 7 (Sunday); the schedule 0 (Sunday) to 6 (Saturday).
  const weekday = trigger.period === 0 ? 7 : trigger.period;
  return nextDailyFire(trigger.start_when, zone, after, 16, (midnight) => {
    return DateTime.fromMillis(midnight, { zone: 'utc' }).weekday === weekday;
  });
}

function nextMonthFire(trigger: MonthTrigger, zone: string, after: number): number | undefined {
  const localTime = parseLocalTime(trigger.start_when);
  if (!localTime || !Number.isInteger(trigger.period) || trigger.period < 1 || trigger.period > 31) return undefined;
  const firstMonth = DateTime.fromMillis(wallOf(after, zone), { zone: 'utc' }).startOf('month').minus({ months: 1 });
  for (let i = 0; i < MAX_MONTHS; i++) {
    const month = firstMonth.plus({ months: i });
    // Clamped from the anchor day every month (31 gives Feb 28, then Mar 31), never from the previous fire.
    const day = Math.min(trigger.period, month.endOf('month').day);
    const wall = month.set({ day, hour: localTime.hour, minute: localTime.minute }).toMillis();
    const fire = firstValidInstantFrom(wall, zone);
    if (fire !== undefined && fire > after) return fire;
  }
  return undefined;
}

// ---------------------------------------------------------------------------------------------
// Hour, Minute: slots start_time + k * period inside a daily window.
// ---------------------------------------------------------------------------------------------

function nextWindowFire(trigger: WindowTrigger, zone: string, after: number): number | undefined {
  const start = parseLocalTime(trigger.start_time);
  const end = parseLocalTime(trigger.end_time);
  const startWhen = parseStartWhen(trigger.start_when, zone);
  const stepMinutes = trigger.type === 'Hour' ? trigger.period * 60 : trigger.period;
  if (!start || !end || startWhen === undefined || !Number.isInteger(stepMinutes) || stepMinutes < 1) return undefined;
  const stepMs = stepMinutes * MINUTE_MS;
  const startOffset = minuteOfDay(start) * MINUTE_MS;
  // An end before the start closes the window on the next day (22:00..02:00 runs past midnight).
  const endMinute = minuteOfDay(end) < minuteOfDay(start) ? minuteOfDay(end) + MINUTES_PER_DAY : minuteOfDay(end);
  const endOffset = endMinute * MINUTE_MS;

  // A fire is after `after` and not before start_when. Wall time never runs backwards when each wall time
  // stands for its first occurrence, so no slot with a wall time earlier than the bound's can qualify:
  // start at the bound's wall time (this also jumps straight to a start_when far in the future).
  // Slots at or after it can still be too early (the first pass of an overlap), hence the instant check.
  const bound = Math.max(after, startWhen);
  const boundWall = wallOf(bound, zone);
  // The window that opened the day before may still be running past midnight.
  const firstDay = startOfWallDay(boundWall) - DAY_MS;
  for (let i = 0; i < MAX_WINDOW_DAYS; i++) {
    const day = firstDay + i * DAY_MS;
    const windowStart = day + startOffset;
    const windowEnd = day + endOffset;
    if (windowEnd < boundWall) continue;
    const firstSlot = Math.max(0, Math.ceil((boundWall - windowStart) / stepMs));
    for (let wall = windowStart + firstSlot * stepMs; wall <= windowEnd; wall += stepMs) {
      // A slot the clock skips (DST gap) is dropped: instantOfWall is undefined.
      const fire = instantOfWall(wall, zone);
      if (fire !== undefined && fire > after && fire >= startWhen) return fire;
    }
  }
  return undefined;
}
