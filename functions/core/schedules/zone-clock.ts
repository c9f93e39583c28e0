/**
 * Wall clocks of IANA time zones, read from the runtime's own time zone data (Intl, ICU) rather than
 * through a date library: the schedule functions need only these few conversions, and Luxon was the
 * largest module of their bundles (71 KB of PUT /tenant/schedules/{id}'s 507 KB, over bench/bundles.ts's
 * 500 KB budget). test/unit/zone-clock.test.ts checks every function here against Luxon, which the
 * tests keep as the reference (test/support/reference-trigger-engine.ts).
 *
 * A "wall" time is the clock's reading as epoch milliseconds of that reading in UTC: 2026-03-08T02:30
 * on the clock is Date.UTC(2026, 2, 8, 2, 30), whatever the zone.
 */

const DAY_MS = 86_400_000;
const MINUTE_MS = 60_000;

/** Formatters by zone name. Names come from requests, so the cache is bounded (there are about 600 zones). */
const formatters = new Map<string, Intl.DateTimeFormat>();
const maxFormatters = 1_000;

function formatterOf(zone: string): Intl.DateTimeFormat {
  let formatter = formatters.get(zone);
  if (!formatter) {
    // Throws a RangeError for a zone the runtime does not know.
    formatter = new Intl.DateTimeFormat('en-US', {
      timeZone: zone,
      hourCycle: 'h23',
      year: 'numeric',
      month: 'numeric',
      day: 'numeric',
      hour: 'numeric',
      minute: 'numeric',
      second: 'numeric',
    });
    if (formatters.size >= maxFormatters) formatters.clear();
    formatters.set(zone, formatter);
  }
  return formatter;
}

/** Whether the runtime knows `zone` (as Luxon's IANAZone.isValidZone decides: Intl accepts it). */
export function isKnownZone(zone: string): boolean {
  if (zone === '') return false;
  try {
    formatterOf(zone);
    return true;
  } catch {
    return false;
  }
}

/** Epoch ms of a civil date and time read as UTC; years 0 to 99 stay themselves (Date.UTC makes them 19xx). */
function civilMs(year: number, month: number, day: number, hour: number, minute: number, second: number, ms: number): number {
  const date = new Date(Date.UTC(year, month - 1, day, hour, minute, second, ms));
  if (year >= 0 && year < 100) date.setUTCFullYear(year);
  return date.getTime();
}

/** The zone's offset from UTC at `instant`, in ms (seconds included: Africa/Monrovia was -0:44:30 until 1972). */
function offsetMs(instant: number, zone: string): number {
  const fields: Partial<Record<Intl.DateTimeFormatPartTypes, number>> = {};
  for (const part of formatterOf(zone).formatToParts(instant)) fields[part.type] = Number(part.value);
  const { year = 0, month = 1, day = 1, hour = 0, minute = 0, second = 0 } = fields;
  // The clock's reading has whole seconds: compare it with the instant's whole second.
  const wholeSecond = instant - (((instant % 1000) + 1000) % 1000);
  return civilMs(year, month, day, hour, minute, second, 0) - wholeSecond;
}

/** The wall time the clock shows in `zone` at `instant`. The zone must be known (isKnownZone). */
export function wallOf(instant: number, zone: string): number {
  return instant + offsetMs(instant, zone);
}

/**
 * Every instant at which the clock in `zone` shows `wall`, earliest first: one, two in a DST overlap,
 * none in a gap. An instant near `wall` is `wall` less the offset before or after a transition near it;
 * the offsets a day either side are those (transitions are months apart), and each candidate is kept
 * only if the clock really shows `wall` then.
 */
export function instantsOfWall(wall: number, zone: string): number[] {
  const candidates = [wall - offsetMs(wall - DAY_MS, zone), wall - offsetMs(wall + DAY_MS, zone)];
  const shown = candidates.filter((instant, index) => candidates.indexOf(instant) === index && wallOf(instant, zone) === wall);
  return shown.sort((a, b) => a - b);
}

/** The parts of an ISO 8601 date-time as the schedule file's schema takes it (spec 2.7). */
const ISO_DATE_TIME =
  /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2})(?::(\d{2})(?:\.(\d{1,9}))?)?(Z|([+-])([01]\d|2[0-3]):([0-5]\d))?$/;

const isLeap = (year: number) => (year % 4 === 0 && year % 100 !== 0) || year % 400 === 0;
const monthDays = [31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];
const daysInMonth = (year: number, month: number) => (month === 2 && isLeap(year) ? 29 : (monthDays[month - 1] ?? 0));

export interface IsoDateTime {
  /** The text's date and time as a wall time (epoch ms of that reading in UTC). */
  wall: number;
  /** Its offset from UTC in ms, when the text has one (`Z` is 0). */
  offset?: number;
}

/**
 * Reads an ISO 8601 date-time of the schema's form, or undefined when its fields name no time (month 13,
 * 02-30, 23:60...). 24:00 is the next day's midnight and a fraction keeps its first three digits, as in Luxon.
 */
export function parseIsoDateTime(text: string): IsoDateTime | undefined {
  const match = ISO_DATE_TIME.exec(text);
  if (!match) return undefined;
  const [year, month, day, hour, minute, second] = match.slice(1, 7).map((field) => Number(field ?? 0)) as [
    number,
    number,
    number,
    number,
    number,
    number,
  ];
  const ms = match[7] === undefined ? 0 : Math.floor(parseFloat(`0.${match[7]}`) * 1000);
  const endOfDay = hour === 24 && minute === 0 && second === 0 && ms === 0;
  const valid =
    month >= 1 &&
    month <= 12 &&
    day >= 1 &&
    day <= daysInMonth(year, month) &&
    (hour <= 23 || endOfDay) &&
    minute <= 59 &&
    second <= 59;
  if (!valid) return undefined;
  const wall = civilMs(year, month, day, hour, minute, second, ms);
  if (match[8] === undefined) return { wall };
  const sign = match[9] === '-' ? -1 : 1;
  return { wall, offset: match[8] === 'Z' ? 0 : sign * (Number(match[10]) * 60 + Number(match[11])) * MINUTE_MS };
}

const twoDigits = (value: number) => String(value).padStart(2, '0');

/** An offset in ms as ISO 8601 writes it: `+HH:MM`, `-HH:MM`. */
function offsetText(offset: number): string {
  const minutes = Math.abs(offset) / MINUTE_MS;
  return `${offset < 0 ? '-' : '+'}${twoDigits(Math.trunc(minutes / 60))}:${twoDigits(minutes % 60)}`;
}

/**
 * `instant` as the clock in `zone` shows it, with its offset: `2026-03-08T03:00:00-03:00`, milliseconds only
 * when there are some. RFC 3339 offsets have no seconds, so an offset that had some (Africa/Monrovia until
 * 1972) is written rounded to the minute, with the wall time that offset gives: the text denotes the instant
 * exactly. The zones `UTC` and `GMT` (any case) write `Z`, as Luxon did for its fixed UTC zone.
 */
export function localIso(instant: number, zone: string): string {
  const offset = Math.round(offsetMs(instant, zone) / MINUTE_MS) * MINUTE_MS;
  const wall = new Date(instant + offset).toISOString();
  const time = wall.endsWith('.000Z') ? wall.slice(0, -5) : wall.slice(0, -1);
  const fixedUtc = /^(utc|gmt)$/i.test(zone);
  return `${time}${fixedUtc ? 'Z' : offsetText(offset)}`;
}
