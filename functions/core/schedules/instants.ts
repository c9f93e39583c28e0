import { DateTime } from 'luxon';

/** An instant as UTC and as the schedule's local time, both ISO 8601. */
export const instantIn = (instant: number, timezone: string) => ({
  utc: new Date(instant).toISOString(),
  local: DateTime.fromMillis(instant, { zone: timezone }).toISO({ suppressMilliseconds: true }) ?? '',
});
