import { isKnownZone, localIso } from './zone-clock.ts';

/**
 * The horizon (docs/schedules.md, Horizon): every instant a schedule takes or gives lies from
 * `horizonStart` up to, not including, `horizonEnd`. A start_when outside it is refused (400 at
 * the field); a fire at or after its end is never computed, so a schedule whose next fire would be
 * there has none. Within it every instant is an RFC 3339 date-time with a four-digit year, in UTC
 * and in any zone's local time, and the due index's keys (`<nextFireAt>#…`) sort as time.
 */
export const horizonStart = Date.UTC(1970, 0, 1);
export const horizonEnd = Date.UTC(2100, 0, 1);
/** The largest Hour or Minute `period` (a year of minutes); any period longer than its window fires once a window. */
export const maxWindowPeriod = 525_600;

export const withinHorizon = (instant: number) => Number.isFinite(instant) && instant >= horizonStart && instant < horizonEnd;

/** `instant` as the service writes one (`YYYY-MM-DDTHH:MM:SS.sssZ`); throws outside the horizon, never a five-digit year. */
export function utcInstant(instant: number): string {
  if (!withinHorizon(instant)) throw new RangeError(`Instant ${instant} is outside the schedule horizon`);
  return new Date(instant).toISOString();
}

const UTC_INSTANT = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

/** Whether `text` is an instant as `utcInstant` writes it, within the horizon. */
export const isUtcInstant = (text: unknown): text is string =>
  typeof text === 'string' && UTC_INSTANT.test(text) && withinHorizon(Date.parse(text));

/**
 * An instant as UTC and as the schedule's local time, both ISO 8601 (RFC 3339), each denoting the
 * instant exactly. RFC 3339 offsets have no seconds, and a few zones' offsets had some until the 1970s
 * (Africa/Monrovia was -0:44:30 until 1972): there the local time is written with the offset rounded
 * to the minute, 30 seconds from the wall clock then, rather than an offset that names another instant.
 */
export function instantIn(instant: number, timezone: string) {
  return { utc: utcInstant(instant), local: isKnownZone(timezone) ? localIso(instant, timezone) : '' };
}
