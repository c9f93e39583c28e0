/**
 * When a schedule fires (docs/schedule-time-rules.md). Pure: the caller passes the triggers, the time zone
 * and an instant; every answer is an epoch-ms instant on a whole minute, within the horizon (instants.ts:
 * no fire at or after `horizonEnd`).
 *
 * All calendar work happens in the schedule's time zone. Internally a local date and time ("wall time") is
 * kept as the epoch ms of the same date and time in UTC: a clock without DST, on which adding minutes or days
 * is plain addition. Only `wallOf` and `instantOfWall` cross between wall times and real instants, through
 * zone-clock.ts (the runtime's time zone data).
 *
 * Fires are computed incrementally: each distinct trigger is parsed once (its start_when too) into a plan,
 * each plan walks forward from its previous fire, and the plans' sequences are merged by their next fire.
 * `count` fires of k triggers cost about k + count steps, each a few wall-time conversions.
 */
import { horizonEnd, horizonStart } from './instants.ts';
import type { Trigger } from './schedule-types.ts';
import { instantsOfWall, isKnownZone, parseIsoDateTime, wallOf } from './zone-clock.ts';

const MINUTE_MS = 60_000;
const DAY_MS = 86_400_000;
const MINUTES_PER_DAY = 1440;
/** A skipped wall time moves to the first valid minute at most this many minutes later (real gaps are 30 or 60). */
const MAX_GAP_MINUTES = 180;
/** Days a window trigger may go without a fire before it is taken never to fire again; any real window fires daily. */
const MAX_WINDOW_DAYS = 400;
/** No plan walks past this wall time: the horizon's end in any zone (UTC offsets are under a day). */
const LAST_WALL = horizonEnd + 2 * DAY_MS;

const LOCAL_TIME = /^([01]?[0-9]|2[0-3]):([0-5][0-9])$/;

/** The first fire instant strictly after `after` (epoch ms), or undefined when the triggers never fire again within the horizon. */
export function nextFire(triggers: readonly Trigger[], timezone: string, after: number): number | undefined {
  const first = fireSequence(triggers, timezone, after).next();
  return first.done ? undefined : first.value;
}

/** The next `count` fire instants strictly after `after`, increasing, no duplicates (several triggers on one instant = one fire). */
export function nextFires(triggers: readonly Trigger[], timezone: string, after: number, count: number): number[] {
  const fires: number[] = [];
  if (!(count > 0)) return fires;
  for (const fire of fireSequence(triggers, timezone, after)) {
    fires.push(fire);
    if (fires.length >= count) break;
  }
  return fires;
}

/**
 * Every fire strictly after `after`, increasing, each instant once, up to the horizon's end: lazily, so
 * the caller takes as many as it needs (and stops the work by no longer asking).
 */
export function* fireSequence(triggers: readonly Trigger[], timezone: string, after: number): Generator<number, void, undefined> {
  if (!Number.isFinite(after) || !isKnownZone(timezone)) return;
  const from = Math.max(after, horizonStart - 1);
  const merge = new Merge();
  for (const plan of distinctPlans(triggers, timezone)) merge.add(planFires(plan, timezone, from));
  let last = from;
  for (let fire = merge.take(); fire !== undefined; fire = merge.take()) {
    // Each sequence increases, so the merge does not decrease: equal fires of several triggers come together.
    if (fire > last) {
      last = fire;
      yield fire;
    }
  }
}

/**
 * Parses an ISO 8601 date-time; without offset/Z it is local to `timezone`. Returns epoch ms or undefined when invalid.
 *
 * A local date-time is read like a trigger time: when it occurs twice (DST overlap) it is the first occurrence;
 * when the clock skips it (DST gap) it is the first valid minute after it, the moment the clock jumps.
 */
export function parseStartWhen(value: string, timezone: string): number | undefined {
  const parsed = parseIsoDateTime(value);
  if (!parsed) return undefined;
  if (parsed.offset !== undefined) return parsed.wall - parsed.offset;
  if (!isKnownZone(timezone)) return undefined;
  const wallMinute = parsed.wall - (((parsed.wall % MINUTE_MS) + MINUTE_MS) % MINUTE_MS);
  const exact = instantOfWall(wallMinute, timezone);
  // Seconds and milliseconds ride along when the minute exists; a skipped minute jumps to the gap's end.
  if (exact !== undefined) return exact + (parsed.wall - wallMinute);
  return firstValidInstantFrom(wallMinute, timezone);
}

/** Parses HH:MM to {hour, minute} (undefined when invalid). */
export function parseLocalTime(value: string): { hour: number; minute: number } | undefined {
  const match = LOCAL_TIME.exec(value);
  if (!match) return undefined;
  return { hour: Number(match[1]), minute: Number(match[2]) };
}

// ---------------------------------------------------------------------------------------------
// Plans: a trigger parsed once, as what its fires are computed from.
// ---------------------------------------------------------------------------------------------

type Plan =
  /** Day (every date) and Week (dates of one weekday, 0 = Sunday … 6 = Saturday): at `minute` of the day. */
  | { kind: 'days'; minute: number; weekday?: number }
  /** Month: on `day` (clamped to the month's last), at `minute` of the day. */
  | { kind: 'month'; day: number; minute: number }
  /** Hour and Minute: every `step` minutes from `start` to `end` (minutes of the day; past 1440 the next day), never before `startWhen`. */
  | { kind: 'window'; start: number; end: number; step: number; startWhen: number };

/** The plans of the triggers, once each: triggers written alike are parsed once, triggers meaning the same walk once. */
function distinctPlans(triggers: readonly Trigger[], zone: string): Plan[] {
  const parsed = new Set<string>();
  const plans = new Map<string, Plan>();
  for (const trigger of triggers) {
    const fields = trigger as Partial<Record<'type' | 'period' | 'start_when' | 'start_time' | 'end_time', unknown>>;
    const text = JSON.stringify([fields.type, fields.period, fields.start_when, fields.start_time, fields.end_time]);
    if (parsed.has(text)) continue;
    parsed.add(text);
    const plan = planOf(trigger, zone);
    if (plan) plans.set(JSON.stringify(plan), plan);
  }
  return [...plans.values()];
}

/** A trigger's plan, or undefined when it never fires (a field out of its range: a stored file is whatever was written). */
function planOf(trigger: Trigger, zone: string): Plan | undefined {
  switch (trigger.type) {
    case 'Hour':
    case 'Minute': {
      const start = parseLocalTime(trigger.start_time);
      const end = parseLocalTime(trigger.end_time);
      const startWhen = parseStartWhen(trigger.start_when, zone);
      const step = trigger.type === 'Hour' ? trigger.period * 60 : trigger.period;
      if (!start || !end || startWhen === undefined || !Number.isInteger(step) || step < 1) return undefined;
      const startMinute = minuteOfDay(start);
      // An end before the start closes the window on the next day (22:00..02:00 runs past midnight).
      const endMinute = minuteOfDay(end) < startMinute ? minuteOfDay(end) + MINUTES_PER_DAY : minuteOfDay(end);
      // A window is under a day long, so every step of a day or more fires once a window, at its start:
      // capped, a step that large (a period past the schema's maximum, stored earlier) keeps the arithmetic exact.
      return { kind: 'window', start: startMinute, end: endMinute, step: Math.min(step, MINUTES_PER_DAY), startWhen };
    }
    case 'Day': {
      const time = parseLocalTime(trigger.start_when);
      return time && { kind: 'days', minute: minuteOfDay(time) };
    }
    case 'Week': {
      const time = parseLocalTime(trigger.start_when);
      const valid = time && Number.isInteger(trigger.period) && trigger.period >= 0 && trigger.period <= 6;
      return valid ? { kind: 'days', minute: minuteOfDay(time), weekday: trigger.period } : undefined;
    }
    case 'Month': {
      const time = parseLocalTime(trigger.start_when);
      const valid = time && Number.isInteger(trigger.period) && trigger.period >= 1 && trigger.period <= 31;
      return valid ? { kind: 'month', day: trigger.period, minute: minuteOfDay(time) } : undefined;
    }
    default:
      return undefined;
  }
}

/** A plan's fires strictly after `after`, increasing, below the horizon's end. */
function* planFires(plan: Plan, zone: string, after: number): Generator<number, void, undefined> {
  const fires =
    plan.kind === 'window'
      ? windowFires(plan, zone, after)
      : plan.kind === 'days'
        ? dayFires(plan, zone, after)
        : monthFires(plan, zone, after);
  let last = after;
  for (const fire of fires) {
    if (fire >= horizonEnd) return;
    if (fire > last) {
      last = fire;
      yield fire;
    }
  }
}

/** Merges increasing sequences by their next value: a binary heap of the sequences' heads. */
class Merge {
  private readonly heads: Array<{ fire: number; rest: Iterator<number, void, undefined> }> = [];

  add(sequence: Iterator<number, void, undefined>): void {
    const first = sequence.next();
    if (first.done) return;
    this.heads.push({ fire: first.value, rest: sequence });
    for (let index = this.heads.length - 1; index > 0;) {
      const parent = (index - 1) >> 1;
      if (!this.less(index, parent)) break;
      this.swap(index, parent);
      index = parent;
    }
  }

  /** The smallest head (undefined when every sequence has ended); its sequence moves on to its next value. */
  take(): number | undefined {
    const top = this.heads[0];
    if (!top) return undefined;
    const fire = top.fire;
    const next = top.rest.next();
    if (next.done) {
      const last = this.heads.pop() as (typeof this.heads)[number];
      if (last === top) return fire;
      this.heads[0] = last;
    } else {
      top.fire = next.value;
    }
    for (let index = 0; ;) {
      const left = 2 * index + 1;
      const right = left + 1;
      let smallest = index;
      if (left < this.heads.length && this.less(left, smallest)) smallest = left;
      if (right < this.heads.length && this.less(right, smallest)) smallest = right;
      if (smallest === index) break;
      this.swap(index, smallest);
      index = smallest;
    }
    return fire;
  }

  private less(a: number, b: number): boolean {
    return (this.heads[a]?.fire ?? Infinity) < (this.heads[b]?.fire ?? Infinity);
  }

  private swap(a: number, b: number): void {
    const held = this.heads[a] as (typeof this.heads)[number];
    this.heads[a] = this.heads[b] as (typeof this.heads)[number];
    this.heads[b] = held;
  }
}

// ---------------------------------------------------------------------------------------------
// Wall time <-> instant: the zone's offsets come from zone-clock.ts.
// ---------------------------------------------------------------------------------------------

/**
 * The instant the clock in `zone` shows `wall`; the earlier one when it shows it twice (DST overlap);
 * undefined when it never shows it (DST gap).
 */
function instantOfWall(wall: number, zone: string): number | undefined {
  const [instant] = instantsOfWall(wall, zone);
  if (instant === undefined) return undefined;
  // A few zones' offsets had seconds until the 1970s (local mean time: Africa/Monrovia was -0:44:30 until
  // 1972): such a wall minute is no whole minute of UTC, and a fire is always one, so it is the next.
  return Math.ceil(instant / MINUTE_MS) * MINUTE_MS;
}

/** `wall` as an instant or, when the clock skips it, the first later whole minute the clock shows. */
function firstValidInstantFrom(wall: number, zone: string): number | undefined {
  const exact = instantOfWall(wall, zone);
  if (exact !== undefined) return exact;
  // In a gap: the clock shows none of its minutes, then every minute after it (a gap is one stretch, and
  // gaps are months apart), so the first minute shown is found by halving, in 8 conversions rather than 60.
  let shown = MAX_GAP_MINUTES;
  let instant = instantOfWall(wall + shown * MINUTE_MS, zone);
  if (instant === undefined) return undefined;
  for (let skipped = 0; shown - skipped > 1;) {
    const middle = (skipped + shown) >> 1;
    const found = instantOfWall(wall + middle * MINUTE_MS, zone);
    if (found === undefined) skipped = middle;
    else [shown, instant] = [middle, found];
  }
  return instant;
}

/** Midnight (wall time) of the local date whose wall time is `wall`. */
function startOfWallDay(wall: number): number {
  return wall - (((wall % DAY_MS) + DAY_MS) % DAY_MS);
}

function minuteOfDay(time: { hour: number; minute: number }): number {
  return time.hour * 60 + time.minute;
}

// ---------------------------------------------------------------------------------------------
// Day, Week, Month: one wall time per matching date.
// ---------------------------------------------------------------------------------------------

/**
 * Fires of a Day or Week plan after `after`, from the day before `after`'s local date on: a fire pushed
 * forward by a gap can land on the next local date.
 */
function* dayFires(plan: Extract<Plan, { kind: 'days' }>, zone: string, after: number): Generator<number, void, undefined> {
  let midnight = startOfWallDay(wallOf(after, zone)) - DAY_MS;
  const stride = plan.weekday === undefined ? 1 : 7;
  // Straight to the first date on the weekday (the wall clock's UTC weekday is the local one).
  if (plan.weekday !== undefined) midnight += ((plan.weekday - new Date(midnight).getUTCDay() + 7) % 7) * DAY_MS;
  for (; midnight <= LAST_WALL; midnight += stride * DAY_MS) {
    const fire = firstValidInstantFrom(midnight + plan.minute * MINUTE_MS, zone);
    if (fire !== undefined && fire > after) yield fire;
  }
}

/** Fires of a Month plan after `after`, from the month before `after`'s local month on. */
function* monthFires(plan: Extract<Plan, { kind: 'month' }>, zone: string, after: number): Generator<number, void, undefined> {
  const wall = new Date(wallOf(after, zone));
  const year = wall.getUTCFullYear();
  for (let month = wall.getUTCMonth() - 1; Date.UTC(year, month, 1) <= LAST_WALL; month++) {
    // Clamped from the anchor day every month (31 gives Feb 28, then Mar 31), never from the previous fire.
    const day = Math.min(plan.day, new Date(Date.UTC(year, month + 1, 0)).getUTCDate());
    const fire = firstValidInstantFrom(Date.UTC(year, month, day) + plan.minute * MINUTE_MS, zone);
    if (fire !== undefined && fire > after) yield fire;
  }
}

// ---------------------------------------------------------------------------------------------
// Hour, Minute: slots start_time + k * period inside a daily window.
// ---------------------------------------------------------------------------------------------

function* windowFires(plan: Extract<Plan, { kind: 'window' }>, zone: string, after: number): Generator<number, void, undefined> {
  const { start, end, step, startWhen } = plan;
  const stepMs = step * MINUTE_MS;
  // A fire is after `after` and not before start_when. Wall time never runs backwards when each wall time
  // stands for its first occurrence, so no slot with a wall time earlier than the bound's can qualify:
  // start at the bound's wall time (this also jumps straight to a start_when far in the future).
  // Slots at or after it can still be too early (the first pass of an overlap), hence the instant check.
  const bound = Math.max(after, startWhen);
  if (bound >= horizonEnd) return;
  const boundWall = wallOf(bound, zone);
  let idleDays = 0;
  // The window that opened the day before may still be running past midnight.
  for (let day = startOfWallDay(boundWall) - DAY_MS; day <= LAST_WALL && idleDays < MAX_WINDOW_DAYS; day += DAY_MS) {
    idleDays += 1;
    const windowStart = day + start * MINUTE_MS;
    const windowEnd = day + end * MINUTE_MS;
    if (windowEnd < boundWall) continue;
    const firstSlot = Math.max(0, Math.ceil((boundWall - windowStart) / stepMs));
    for (let wall = windowStart + firstSlot * stepMs; wall <= windowEnd; wall += stepMs) {
      // A slot the clock skips (DST gap) is dropped: instantOfWall is undefined.
      const fire = instantOfWall(wall, zone);
      if (fire !== undefined && fire > after && fire >= startWhen) {
        idleDays = 0;
        yield fire;
      }
    }
  }
}
