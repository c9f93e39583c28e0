import fc from 'fast-check';
import { DateTime } from 'luxon';
import { describe, expect, test, vi } from 'vitest';
import type { DayTrigger, MonthTrigger, Trigger, WeekTrigger, WindowTrigger } from '#functions/core/schedules/schedule-types.ts';
import { nextFire, nextFires, parseLocalTime, parseStartWhen } from '#functions/core/schedules/trigger-engine.ts';

const NY = 'America/New_York'; // EST -05:00, EDT -04:00; changes at 02:00 local
const BERLIN = 'Europe/Berlin'; // CET +01:00, CEST +02:00; changes at 01:00 UTC
const LORD_HOWE = 'Australia/Lord_Howe'; // +10:30 standard, +11:00 summer: a 30-minute shift
const KATHMANDU = 'Asia/Kathmandu'; // +05:45, no DST
const SAO_PAULO = 'America/Sao_Paulo'; // -03:00, no DST since 2019
const UTC = 'UTC';

const MINUTE = 60_000;
const DAY = 86_400_000;

const at = (iso: string) => Date.parse(iso);
const iso = (ms: number) => new Date(ms).toISOString();

const day = (time: string): DayTrigger => ({ type: 'Day', start_when: time });
const week = (period: number, time: string): WeekTrigger => ({ type: 'Week', period, start_when: time });
const month = (period: number, time: string): MonthTrigger => ({ type: 'Month', period, start_when: time });
const hours = (period: number, start_time: string, end_time: string, start_when = '2026-01-01T00:00'): WindowTrigger => ({
  type: 'Hour',
  period,
  start_when,
  start_time,
  end_time,
});
const minutes = (period: number, start_time: string, end_time: string, start_when = '2026-01-01T00:00'): WindowTrigger => ({
  type: 'Minute',
  period,
  start_when,
  start_time,
  end_time,
});

// Expected instants (space-separated, UTC) are worked out by hand from the offsets above
// (UTC = local time minus offset); the comment on a case gives the local times.
type Case = [name: string, zone: string, triggers: Trigger[], after: string, expected: string];

const dayCases: Case[] = [
  // 2027-03-14 02:30 EST does not exist (02:00 -> 03:00): fires at 03:00 EDT. Then 02:30 EDT.
  ['NY gap: 03:00', NY, [day('02:30')], '2027-03-13T12:00Z', '2027-03-14T07:00Z 2027-03-15T06:30Z 2027-03-16T06:30Z'],
  // 02:00 itself is the first skipped minute on 2026-03-08.
  ['NY gap, first minute', NY, [day('02:00')], '2026-03-07T12:00Z', '2026-03-08T07:00Z 2026-03-09T06:00Z'],
  // 02:59 is the last skipped minute on 2028-03-12: the next minute (03:00 EDT) is the fire.
  ['NY gap, last minute', NY, [day('02:59')], '2028-03-11T12:00Z', '2028-03-12T07:00Z 2028-03-13T06:59Z'],
  // 2027-11-07 01:30 happens at 05:30Z (EDT) and again at 06:30Z (EST): only the first fires.
  ['NY overlap: first', NY, [day('01:30')], '2027-11-06T12:00Z', '2027-11-07T05:30Z 2027-11-08T06:30Z'],
  ['NY overlap start', NY, [day('01:00')], '2028-11-04T12:00Z', '2028-11-05T05:00Z 2028-11-06T06:00Z'],
  ['NY after overlap', NY, [day('01:59')], '2026-11-01T05:59Z', '2026-11-02T06:59Z'],
  // 2026-03-29 02:30 does not exist in Berlin (02:00 CET -> 03:00 CEST).
  ['Berlin gap', BERLIN, [day('02:30')], '2026-03-28T12:00Z', '2026-03-29T01:00Z 2026-03-30T00:30Z'],
  ['Berlin gap, first minute', BERLIN, [day('02:00')], '2027-03-27T12:00Z', '2027-03-28T01:00Z 2027-03-29T00:00Z'],
  // 2026-10-25 02:30 happens at 00:30Z (CEST) and 01:30Z (CET).
  ['Berlin overlap: first', BERLIN, [day('02:30')], '2026-10-24T12:00Z', '2026-10-25T00:30Z 2026-10-26T01:30Z'],
  ['Berlin overlap start', BERLIN, [day('02:00')], '2027-10-30T12:00Z', '2027-10-31T00:00Z 2027-11-01T01:00Z'],
  // Lord Howe 2026-10-04: 02:00 (+10:30) -> 02:30 (+11:00); 02:15 is skipped, the clock next shows 02:30.
  ['Lord Howe gap', LORD_HOWE, [day('02:15')], '2026-10-03T00:00Z', '2026-10-03T15:30Z 2026-10-04T15:15Z'],
  ['Lord Howe gap, first minute', LORD_HOWE, [day('02:00')], '2027-10-02T00:00Z', '2027-10-02T15:30Z 2027-10-03T15:00Z'],
  // Lord Howe 2026-04-05: 02:00 (+11:00) -> 01:30 (+10:30); 01:45 happens at 14:45Z and 15:15Z.
  ['Lord Howe overlap: first', LORD_HOWE, [day('01:45')], '2026-04-04T00:00Z', '2026-04-04T14:45Z 2026-04-05T15:15Z'],
  ['Lord Howe overlap start', LORD_HOWE, [day('01:30')], '2028-04-01T00:00Z', '2028-04-01T14:30Z 2028-04-02T15:00Z'],
  ['Kathmandu +05:45', KATHMANDU, [day('09:00')], '2027-03-14T00:00Z', '2027-03-14T03:15Z 2027-03-15T03:15Z'],
  // Until 2019 Sao Paulo skipped 00:00-00:59 on the first Sunday of November; no longer.
  ['Sao Paulo: no gap now', SAO_PAULO, [day('00:30')], '2026-10-31T12:00Z', '2026-11-01T03:30Z 2026-11-02T03:30Z'],
  // ... and repeated 23:00-23:59 on the Saturday before the third Sunday of February; no longer.
  ['Sao Paulo: no overlap now', SAO_PAULO, [day('23:30')], '2027-02-20T12:00Z', '2027-02-21T02:30Z 2027-02-22T02:30Z'],
  ['one-digit hour, after a fire', UTC, [day('7:05')], '2028-01-01T07:05Z', '2028-01-02T07:05Z'],
];

const weekCases: Case[] = [
  // 2026-03-08 is a Sunday, also the US spring change (10:00 is after it: EDT).
  ['Week 0 (Sunday)', NY, [week(0, '10:00')], '2026-03-04T12:00Z', '2026-03-08T14:00Z 2026-03-15T14:00Z'],
  // From Sunday 2026-10-25 (Berlin fall change) to Saturday 2026-10-31, CET.
  ['Week 6 (Saturday)', BERLIN, [week(6, '23:30')], '2026-10-25T00:00Z', '2026-10-31T22:30Z 2026-11-07T22:30Z'],
  ['Week 6, same day', KATHMANDU, [week(6, '18:00')], '2028-01-01T00:00Z', '2028-01-01T12:15Z 2028-01-08T12:15Z'],
  ['Week 0 in NY gap', NY, [week(0, '02:30')], '2027-03-08T00:00Z', '2027-03-14T07:00Z 2027-03-21T06:30Z'],
  ['Week 0 in Lord Howe overlap', LORD_HOWE, [week(0, '01:30')], '2027-03-30T00:00Z', '2027-04-03T14:30Z 2027-04-10T15:00Z'],
];

const monthCases: Case[] = [
  // Leap year: day 31 -> Feb 29, then back to 31 (from the anchor, not from the Feb fire), Apr 30.
  [
    'Month 31 in a leap year',
    NY,
    [month(31, '09:00')],
    '2028-01-31T18:00Z',
    '2028-02-29T14:00Z 2028-03-31T13:00Z 2028-04-30T13:00Z 2028-05-31T13:00Z',
  ],
  [
    'Month 31 in a common year',
    BERLIN,
    [month(31, '08:00')],
    '2027-02-01T00:00Z',
    '2027-02-28T07:00Z 2027-03-31T06:00Z 2027-04-30T06:00Z',
  ],
  [
    'Month 30',
    UTC,
    [month(30, '12:00')],
    '2027-01-30T12:00Z',
    '2027-02-28T12:00Z 2027-03-30T12:00Z 2027-04-30T12:00Z 2027-05-30T12:00Z',
  ],
  ['Month 29 in 2028 (leap)', UTC, [month(29, '12:00')], '2028-02-01T00:00Z', '2028-02-29T12:00Z 2028-03-29T12:00Z'],
  ['Month 29 in 2027 (common)', UTC, [month(29, '12:00')], '2027-02-01T00:00Z', '2027-02-28T12:00Z 2027-03-29T12:00Z'],
  ['Month 1, after a fire', KATHMANDU, [month(1, '00:00')], '2026-12-31T18:15Z', '2027-01-31T18:15Z 2027-02-28T18:15Z'],
  ['Month 14 in NY gap', NY, [month(14, '02:30')], '2027-03-01T00:00Z', '2027-03-14T07:00Z 2027-04-14T06:30Z'],
  // 2027-10-31 is the EU fall change: 02:30 happens twice, the first (CEST) fires.
  ['Month 31 in the Berlin overlap', BERLIN, [month(31, '02:30')], '2027-10-01T00:00Z', '2027-10-31T00:30Z 2027-11-30T01:30Z'],
];

const windowCases: Case[] = [
  // 2027-03-14: 00:00, 01:00 EST; 02:00 skipped; 03:00, 04:00 EDT.
  [
    'Hour window across the New York gap',
    NY,
    [hours(1, '00:00', '04:00')],
    '2027-03-14T04:00Z',
    '2027-03-14T05:00Z 2027-03-14T06:00Z 2027-03-14T07:00Z 2027-03-14T08:00Z 2027-03-15T04:00Z',
  ],
  // 2027-11-07: 00:00, 01:00 EDT; the second 01:00 (EST) does not fire; 02:00, 03:00, 04:00 EST.
  [
    'Hour window across the New York overlap',
    NY,
    [hours(1, '00:00', '04:00')],
    '2027-11-07T03:00Z',
    '2027-11-07T04:00Z 2027-11-07T05:00Z 2027-11-07T07:00Z 2027-11-07T08:00Z 2027-11-07T09:00Z 2027-11-08T05:00Z',
  ],
  // 2028-03-12: 01:30, 01:45 EST; 02:00-02:45 skipped; 03:00, 03:15 EDT.
  [
    'Minute window across the New York gap',
    NY,
    [minutes(15, '01:30', '03:15')],
    '2028-03-12T06:00Z',
    '2028-03-12T06:30Z 2028-03-12T06:45Z 2028-03-12T07:00Z 2028-03-12T07:15Z 2028-03-13T05:30Z',
  ],
  // 2028-11-05: 00:30, 01:00, 01:30 EDT (each once); 02:00 EST.
  [
    'Minute window across the New York overlap',
    NY,
    [minutes(30, '00:30', '02:00')],
    '2028-11-05T04:00Z',
    '2028-11-05T04:30Z 2028-11-05T05:00Z 2028-11-05T05:30Z 2028-11-05T07:00Z 2028-11-06T05:30Z',
  ],
  // 2026-03-29: 01:00 CET; 02:00 skipped; 03:00, 04:00 CEST.
  [
    'Hour window across the Berlin gap',
    BERLIN,
    [hours(1, '01:00', '04:00')],
    '2026-03-28T23:00Z',
    '2026-03-29T00:00Z 2026-03-29T01:00Z 2026-03-29T02:00Z 2026-03-29T23:00Z',
  ],
  // 2026-10-25: 02:00, 02:20, 02:40 CEST (first pass only); 03:00 CET.
  [
    'Minute window across the Berlin overlap',
    BERLIN,
    [minutes(20, '02:00', '03:00')],
    '2026-10-24T23:00Z',
    '2026-10-25T00:00Z 2026-10-25T00:20Z 2026-10-25T00:40Z 2026-10-25T02:00Z 2026-10-26T01:00Z',
  ],
  // 2027-10-31: 00:00, 01:00, 02:00 CEST; 03:00, 04:00 CET.
  [
    'Hour window across the Berlin overlap (2027)',
    BERLIN,
    [hours(1, '00:00', '04:00')],
    '2027-10-30T21:00Z',
    '2027-10-30T22:00Z 2027-10-30T23:00Z 2027-10-31T00:00Z 2027-10-31T02:00Z 2027-10-31T03:00Z 2027-10-31T23:00Z',
  ],
  // 2026-10-04: 01:30, 01:45 (+10:30); 02:00, 02:15 skipped; 02:30, 02:45, 03:00 (+11).
  [
    'Minute window across the Lord Howe gap',
    LORD_HOWE,
    [minutes(15, '01:30', '03:00')],
    '2026-10-03T14:00Z',
    '2026-10-03T15:00Z 2026-10-03T15:15Z 2026-10-03T15:30Z 2026-10-03T15:45Z 2026-10-03T16:00Z 2026-10-04T14:30Z',
  ],
  // 2026-04-05: 01:15, 01:30, 01:45 (+11, first pass); 02:00, 02:15 (+10:30).
  [
    'Minute window across the Lord Howe overlap',
    LORD_HOWE,
    [minutes(15, '01:15', '02:15')],
    '2026-04-04T14:00Z',
    '2026-04-04T14:15Z 2026-04-04T14:30Z 2026-04-04T14:45Z 2026-04-04T15:30Z 2026-04-04T15:45Z 2026-04-05T14:45Z',
  ],
  // 2028-10-01: 00:00, 01:00 (+10:30); 02:00 skipped; 03:00, 04:00 (+11).
  [
    'Hour window across the Lord Howe gap (2028)',
    LORD_HOWE,
    [hours(1, '00:00', '04:00')],
    '2028-09-30T13:00Z',
    '2028-09-30T13:30Z 2028-09-30T14:30Z 2028-09-30T16:00Z 2028-09-30T17:00Z 2028-10-01T13:00Z',
  ],
  // 22:00..02:00 every hour: 22, 23, 00, 01, 02, then 22 the next evening.
  [
    'Window crossing midnight',
    KATHMANDU,
    [hours(1, '22:00', '02:00')],
    '2026-06-10T16:00Z',
    '2026-06-10T16:15Z 2026-06-10T17:15Z 2026-06-10T18:15Z 2026-06-10T19:15Z 2026-06-10T20:15Z 2026-06-11T16:15Z',
  ],
  // After midnight, the window opened the evening before is still running.
  [
    'Window crossing midnight, after midnight',
    KATHMANDU,
    [hours(1, '22:00', '02:00')],
    '2026-06-10T19:00Z',
    '2026-06-10T19:15Z 2026-06-10T20:15Z 2026-06-11T16:15Z',
  ],
  // The night Sao Paulo used to skip 00:00-00:59 now has all five slots.
  [
    'Sao Paulo: window over the old DST night keeps every slot',
    SAO_PAULO,
    [hours(1, '22:00', '02:00')],
    '2026-10-31T23:30Z',
    '2026-11-01T01:00Z 2026-11-01T02:00Z 2026-11-01T03:00Z 2026-11-01T04:00Z 2026-11-01T05:00Z',
  ],
  [
    'Single-slot Hour window (start = end)',
    UTC,
    [hours(1, '09:00', '09:00')],
    '2027-05-05T08:00Z',
    '2027-05-05T09:00Z 2027-05-06T09:00Z 2027-05-07T09:00Z',
  ],
  [
    'Single-slot Minute window (start = end)',
    NY,
    [minutes(30, '12:45', '12:45')],
    '2027-07-01T00:00Z',
    '2027-07-01T16:45Z 2027-07-02T16:45Z',
  ],
  [
    'Period that does not divide the window',
    UTC,
    [minutes(25, '10:00', '11:00')],
    '2027-05-05T00:00Z',
    '2027-05-05T10:00Z 2027-05-05T10:25Z 2027-05-05T10:50Z 2027-05-06T10:00Z',
  ],
  [
    'Every 5 hours over the whole day, after exactly a fire',
    UTC,
    [hours(5, '00:00', '23:59')],
    '2027-05-05T00:00Z',
    '2027-05-05T05:00Z 2027-05-05T10:00Z 2027-05-05T15:00Z 2027-05-05T20:00Z 2027-05-06T00:00Z',
  ],
];

const startWhenCases: Case[] = [
  [
    'start_when far in the future',
    UTC,
    [minutes(10, '08:00', '18:00', '2028-06-15T12:34:56Z')],
    '2026-01-01T00:00Z',
    '2028-06-15T12:40Z 2028-06-15T12:50Z',
  ],
  // 10:30+02:00 is 10:30 CEST: the 10:00 slot is too early, 11:00 CEST is the first.
  [
    'start_when with an offset',
    BERLIN,
    [hours(1, '00:00', '23:00', '2027-07-01T10:30:00+02:00')],
    '2026-01-01T00:00Z',
    '2027-07-01T09:00Z 2027-07-01T10:00Z',
  ],
  [
    'start_when without an offset is Berlin time',
    BERLIN,
    [hours(1, '00:00', '23:00', '2027-07-01T10:30')],
    '2026-01-01T00:00Z',
    '2027-07-01T09:00Z',
  ],
  [
    'start_when without an offset is New York time',
    NY,
    [hours(1, '00:00', '23:00', '2027-07-01T10:30')],
    '2026-01-01T00:00Z',
    '2027-07-01T15:00Z',
  ],
  // 10:30Z is 12:30 CEST.
  [
    'start_when in UTC (Z) for a Berlin schedule',
    BERLIN,
    [hours(1, '00:00', '23:00', '2027-07-01T10:30Z')],
    '2026-01-01T00:00Z',
    '2027-07-01T11:00Z',
  ],
  [
    'start_when exactly on a slot fires that slot',
    BERLIN,
    [hours(1, '00:00', '23:00', '2027-07-01T11:00')],
    '2026-01-01T00:00Z',
    '2027-07-01T09:00Z',
  ],
  // 02:30 does not exist on 2027-03-14 in New York: start_when is 03:00 EDT, so the 03:00 slot fires.
  [
    'start_when in the New York gap',
    NY,
    [hours(1, '00:00', '23:00', '2027-03-14T02:30')],
    '2026-01-01T00:00Z',
    '2027-03-14T07:00Z 2027-03-14T08:00Z',
  ],
  // 01:30 on 2027-11-07 is read as its first occurrence (EDT), so the first 01:30 slot fires.
  [
    'start_when in the New York overlap',
    NY,
    [minutes(30, '00:00', '23:30', '2027-11-07T01:30')],
    '2026-01-01T00:00Z',
    '2027-11-07T05:30Z 2027-11-07T07:00Z',
  ],
  // Midnight-crossing window: slots of the window opened on the 10th count from start_when on.
  [
    'start_when after midnight inside a running window',
    KATHMANDU,
    [hours(1, '22:00', '02:00', '2026-06-11T00:30')],
    '2026-01-01T00:00Z',
    '2026-06-10T19:15Z 2026-06-10T20:15Z 2026-06-11T16:15Z',
  ],
];

const multipleCases: Case[] = [
  // 2027-01-04 is a Monday: Hour 09:00, Day, Week 1 and Month 4 all fire at 09:00 -> one fire.
  [
    'Four triggers on one instant fire once',
    UTC,
    [hours(1, '08:00', '10:00'), day('09:00'), week(1, '09:00'), month(4, '09:00')],
    '2027-01-04T00:00Z',
    '2027-01-04T08:00Z 2027-01-04T09:00Z 2027-01-04T10:00Z 2027-01-05T08:00Z',
  ],
  // The Day moved out of the gap lands on the Hour's 03:00 slot.
  [
    'A Day moved out of the gap and an Hour slot fire once',
    NY,
    [day('02:30'), hours(1, '03:00', '03:00')],
    '2027-03-13T12:00Z',
    '2027-03-14T07:00Z 2027-03-15T06:30Z 2027-03-15T07:00Z',
  ],
];

describe.each([
  ['Day', dayCases],
  ['Week', weekCases],
  ['Month', monthCases],
  ['Hour and Minute windows', windowCases],
  ['start_when', startWhenCases],
  ['several triggers', multipleCases],
])('%s', (_group, cases) => {
  test.each(cases)('%s', (_name, zone, triggers, after, expected) => {
    const want = expected.split(' ').map((text) => iso(at(text)));
    expect(nextFires(triggers, zone, at(after), want.length).map(iso)).toEqual(want);
    expect(nextFire(triggers, zone, at(after))).toBe(at(want[0] ?? ''));
  });
});

describe('edge inputs', () => {
  test('no triggers never fire', () => {
    expect(nextFire([], UTC, at('2027-01-01T00:00Z'))).toBeUndefined();
    expect(nextFires([], UTC, at('2027-01-01T00:00Z'), 3)).toEqual([]);
  });

  test('count 0 gives no fires', () => {
    expect(nextFires([day('09:00')], UTC, at('2027-01-01T00:00Z'), 0)).toEqual([]);
  });

  test('a window whose start_when does not parse never fires', () => {
    expect(nextFire([hours(1, '00:00', '23:00', '2027-02-30T00:00')], UTC, at('2027-01-01T00:00Z'))).toBeUndefined();
  });

  test('"after" may carry seconds: the next whole minute fire is returned', () => {
    expect(nextFire([minutes(1, '00:00', '23:59')], BERLIN, at('2027-01-01T10:00:59.999Z'))).toBe(at('2027-01-01T10:01Z'));
  });

  test('overlap and gap answers do not depend on the season the code runs in', () => {
    // Luxon, which the engine used, resolved a local time from a guess at the offset in force "now": in an
    // overlap its pick, and around an irregular change (Lord Howe, 1981-03-01 00:00 to 00:30) whether a
    // time existed at all, changed with the date the code ran. The runtime's clock must not matter.
    try {
      for (const now of ['2027-01-15T12:00Z', '2027-07-15T12:00Z']) {
        vi.useFakeTimers({ now: at(now), toFake: ['Date'] });
        expect(nextFire([day('01:30')], NY, at('2027-11-06T12:00Z'))).toBe(at('2027-11-07T05:30Z'));
        expect(nextFire([day('02:30')], BERLIN, at('2026-10-24T12:00Z'))).toBe(at('2026-10-25T00:30Z'));
        expect(parseStartWhen('2027-11-07T01:30', NY)).toBe(at('2027-11-07T05:30Z'));
        expect(parseStartWhen('1981-03-01T00:30', 'Australia/Lord_Howe')).toBe(at('1981-02-28T14:00Z'));
        expect(parseStartWhen('1981-03-01T00:10', 'Australia/Lord_Howe')).toBe(at('1981-02-28T14:00Z'));
      }
    } finally {
      vi.useRealTimers();
    }
  });
});

describe('parseStartWhen', () => {
  test.each([
    ['2027-01-31T08:00', NY, '2027-01-31T13:00:00.000Z'],
    ['2027-07-31T08:00', NY, '2027-07-31T12:00:00.000Z'],
    ['2027-01-31T08:00:00Z', NY, '2027-01-31T08:00:00.000Z'],
    ['2027-01-31T08:00:15.5+05:45', BERLIN, '2027-01-31T02:15:15.500Z'],
    ['2027-01-31T08:00:00.123456789Z', UTC, '2027-01-31T08:00:00.123Z'],
    ['2027-01-31T08:00:30', KATHMANDU, '2027-01-31T02:15:30.000Z'],
    // Gap: the clock jumps 02:00 -> 03:00, the first instant after 02:30 is 03:00 EDT (seconds are lost).
    ['2027-03-14T02:30', NY, '2027-03-14T07:00:00.000Z'],
    ['2027-03-14T02:30:45', NY, '2027-03-14T07:00:00.000Z'],
    // Overlap: the first occurrence, seconds kept.
    ['2027-11-07T01:30:20', NY, '2027-11-07T05:30:20.000Z'],
    ['2026-04-05T01:45', LORD_HOWE, '2026-04-04T14:45:00.000Z'],
    // ISO 8601 (and Luxon) read 24:00 as the end of the day: midnight of the next one.
    ['2027-01-31T24:00', UTC, '2027-02-01T00:00:00.000Z'],
  ])('%s in %s', (value, zone, expected) => {
    const parsed = parseStartWhen(value, zone);
    expect(parsed === undefined ? undefined : iso(parsed)).toBe(expected);
  });

  test.each([
    '2027-02-30T08:00',
    '2027-13-01T08:00',
    '2027-01-31T23:60',
    '2027-01-31T08:00:60',
    '2027-01-31',
    '2027-01-31 08:00',
    '2027-01-31T08:00+24:00',
    '2027-01-31T08:00+0100',
    'next tuesday',
    '',
  ])('%j is invalid', (value) => {
    expect(parseStartWhen(value, NY)).toBeUndefined();
  });

  test('a local date-time in an unknown zone is invalid', () => {
    expect(parseStartWhen('2027-01-31T08:00', 'Mars/Olympus_Mons')).toBeUndefined();
  });
});

describe('parseLocalTime', () => {
  test.each([
    ['7:05', 7, 5],
    ['07:05', 7, 5],
    ['00:00', 0, 0],
    ['23:59', 23, 59],
    ['19:30', 19, 30],
  ])('%s', (value, hour, minute) => {
    expect(parseLocalTime(value)).toEqual({ hour, minute });
  });

  test.each(['24:00', '7:5', '12:60', '', ' 7:05', '007:05', '12:00:00', 'noon'])('%j is invalid', (value) => {
    expect(parseLocalTime(value)).toBeUndefined();
  });
});

describe('the tz data the cases rely on (Luxon sanity)', () => {
  // [zone, transition instant, offset just before (minutes), offset from it on]
  test.each([
    [NY, '2026-03-08T07:00Z', -300, -240],
    [NY, '2026-11-01T06:00Z', -240, -300],
    [NY, '2027-03-14T07:00Z', -300, -240],
    [NY, '2027-11-07T06:00Z', -240, -300],
    [NY, '2028-03-12T07:00Z', -300, -240],
    [NY, '2028-11-05T06:00Z', -240, -300],
    [BERLIN, '2026-03-29T01:00Z', 60, 120],
    [BERLIN, '2026-10-25T01:00Z', 120, 60],
    [BERLIN, '2027-03-28T01:00Z', 60, 120],
    [BERLIN, '2027-10-31T01:00Z', 120, 60],
    [LORD_HOWE, '2026-04-04T15:00Z', 660, 630],
    [LORD_HOWE, '2026-10-03T15:30Z', 630, 660],
    [LORD_HOWE, '2027-04-03T15:00Z', 660, 630],
    [LORD_HOWE, '2027-10-02T15:30Z', 630, 660],
    [LORD_HOWE, '2028-04-01T15:00Z', 660, 630],
    [LORD_HOWE, '2028-09-30T15:30Z', 630, 660],
  ])('%s changes at %s', (zone, instant, before, after) => {
    expect(DateTime.fromMillis(at(instant) - MINUTE, { zone }).offset).toBe(before);
    expect(DateTime.fromMillis(at(instant), { zone }).offset).toBe(after);
  });

  test.each([SAO_PAULO, KATHMANDU])('%s keeps one offset through 2026-2028', (zone) => {
    const expected = zone === SAO_PAULO ? -180 : 345;
    for (let instant = at('2026-01-01T00:00Z'); instant < at('2029-01-01T00:00Z'); instant += 7 * DAY) {
      expect(DateTime.fromMillis(instant, { zone }).offset).toBe(expected);
    }
  });
});

// ---------------------------------------------------------------------------------------------
// Properties
// ---------------------------------------------------------------------------------------------

const zones = [NY, BERLIN, LORD_HOWE, KATHMANDU, SAO_PAULO, UTC];
const transitions = [
  '2026-03-08T07:00Z',
  '2026-11-01T06:00Z',
  '2027-03-14T07:00Z',
  '2027-11-07T06:00Z',
  '2028-03-12T07:00Z',
  '2028-11-05T06:00Z',
  '2026-03-29T01:00Z',
  '2026-10-25T01:00Z',
  '2027-03-28T01:00Z',
  '2027-10-31T01:00Z',
  '2026-04-04T15:00Z',
  '2026-10-03T15:30Z',
  '2027-04-03T15:00Z',
  '2027-10-02T15:30Z',
  '2028-04-01T15:00Z',
  '2028-09-30T15:30Z',
];

/** Any instant of 2026-2028, half the time within two days of a DST change. */
const instantArb = fc.oneof(
  fc.integer({ min: at('2026-01-01T00:00Z'), max: at('2028-12-31T23:59Z') }),
  fc.tuple(fc.constantFrom(...transitions), fc.integer({ min: -2 * DAY, max: 2 * DAY })).map(([t, d]) => at(t) + d),
);
const zoneArb = fc.constantFrom(...zones);
/** HH:MM, often one of the times DST changes touch, sometimes with a one-digit hour. */
const localTimeArb = fc.oneof(
  fc
    .tuple(fc.integer({ min: 0, max: 23 }), fc.integer({ min: 0, max: 59 }), fc.boolean())
    .map(([h, m, pad]) => `${pad ? String(h).padStart(2, '0') : h}:${String(m).padStart(2, '0')}`),
  fc.constantFrom('00:00', '01:00', '01:30', '01:45', '02:00', '02:15', '02:30', '02:59', '03:00', '23:30'),
);
/** A start_when text: UTC (Z) or local to the schedule. */
const startWhenArb = (instant: fc.Arbitrary<number>) =>
  fc.tuple(instant, fc.boolean()).map(([ms, zulu]) => (zulu ? iso(ms) : iso(ms).slice(0, 16)));
const windowArb = (startWhen: fc.Arbitrary<string>): fc.Arbitrary<WindowTrigger> =>
  fc.oneof(
    fc.record({
      type: fc.constant('Hour' as const),
      period: fc.integer({ min: 1, max: 24 }),
      start_when: startWhen,
      start_time: localTimeArb,
      end_time: localTimeArb,
    }),
    fc.record({
      type: fc.constant('Minute' as const),
      period: fc.oneof(fc.integer({ min: 1, max: 240 }), fc.constantFrom(1, 5, 15, 30)),
      start_when: startWhen,
      start_time: localTimeArb,
      end_time: localTimeArb,
    }),
  );
const triggerArb: fc.Arbitrary<Trigger> = fc.oneof(
  localTimeArb.map(day),
  fc.tuple(fc.integer({ min: 0, max: 6 }), localTimeArb).map(([p, t]) => week(p, t)),
  fc.tuple(fc.integer({ min: 1, max: 31 }), localTimeArb).map(([p, t]) => month(p, t)),
  windowArb(startWhenArb(fc.integer({ min: at('2025-06-01T00:00Z'), max: at('2028-12-31T23:59Z') }))),
);
const triggersArb = fc.array(triggerArb, { minLength: 1, maxLength: 3 });

/** The local date and time at `instant` as a UTC-based number, so wall times compare and subtract. */
function wallAt(instant: number, zone: string): number {
  const local = DateTime.fromMillis(instant, { zone });
  return Date.UTC(local.year, local.month - 1, local.day, local.hour, local.minute, local.second, local.millisecond);
}

type Clock = (instant: number) => number;

/** `wallAt` for one zone, remembered: a scan asks for the same instants several times. */
function clockOf(zone: string): Clock {
  const seen = new Map<number, number>();
  return (instant) => {
    let wall = seen.get(instant);
    if (wall === undefined) {
      wall = wallAt(instant, zone);
      seen.set(instant, wall);
    }
    return wall;
  };
}

/** True when the clock showed the wall time of `instant` earlier too (the second pass of an overlap; shifts are 30 or 60 minutes). */
function isRepeat(instant: number, clock: Clock): boolean {
  const wall = clock(instant);
  return clock(instant - 30 * MINUTE) === wall || clock(instant - 60 * MINUTE) === wall;
}

function minuteOfDay(time: string): number {
  const [hour = 0, minute = 0] = time.split(':').map(Number);
  return hour * 60 + minute;
}

/** Whether a Day trigger at `time` fires at whole-minute `instant`, decided from the clock, not the engine. */
function dayFiresAt(time: string, clock: Clock, instant: number): boolean {
  const wall = clock(instant);
  const target = wall - (wall % DAY) + minuteOfDay(time) * MINUTE;
  // HH:MM itself, or the first minute after the clock jumped over it; never its second pass.
  return clock(instant - MINUTE) < target && target <= wall && !isRepeat(instant, clock);
}

/** Whether a window trigger fires at whole-minute `instant`, decided from the clock, not the engine. */
function windowFiresAt(trigger: WindowTrigger, startWhen: number, clock: Clock, instant: number): boolean {
  const step = trigger.type === 'Hour' ? trigger.period * 60 : trigger.period;
  const start = minuteOfDay(trigger.start_time);
  const end = minuteOfDay(trigger.end_time) < start ? minuteOfDay(trigger.end_time) + 1440 : minuteOfDay(trigger.end_time);
  const wall = clock(instant);
  const midnight = wall - (wall % DAY);
  // A slot of the window opened today, or of yesterday's when it runs past midnight.
  const isSlot = [midnight, midnight - DAY].some((windowDay) => {
    const minute = (wall - windowDay) / MINUTE;
    return minute >= start && minute <= end && (minute - start) % step === 0;
  });
  return isSlot && instant >= startWhen && !isRepeat(instant, clock);
}

describe('properties', () => {
  test('nextFire is strictly after "after" and on a whole minute', () => {
    fc.assert(
      fc.property(triggersArb, zoneArb, instantArb, (triggers, zone, after) => {
        const fire = nextFire(triggers, zone, after);
        expect(fire).toBeDefined();
        expect(fire).toBeGreaterThan(after);
        expect((fire ?? 0) % MINUTE).toBe(0);
      }),
      { numRuns: 200 },
    );
  });

  test('nextFires strictly increase and agree with nextFire step by step', () => {
    fc.assert(
      fc.property(triggersArb, zoneArb, instantArb, (triggers, zone, after) => {
        const fires = nextFires(triggers, zone, after, 6);
        expect(fires).toHaveLength(6);
        let previous = after;
        for (const fire of fires) {
          expect(fire).toBeGreaterThan(previous);
          expect(nextFire(triggers, zone, previous)).toBe(fire);
          previous = fire;
        }
      }),
      { numRuns: 200 },
    );
  });

  test('any instant between two fires (or just before one) leads to that fire', () => {
    fc.assert(
      fc.property(triggersArb, zoneArb, instantArb, fc.double({ min: 0, max: 1, noNaN: true }), (triggers, zone, after, f) => {
        let previous = after;
        for (const fire of nextFires(triggers, zone, after, 4)) {
          expect(nextFire(triggers, zone, fire - 1)).toBe(fire);
          const between = Math.min(fire - 1, previous + Math.floor(f * (fire - previous)));
          expect(nextFire(triggers, zone, between)).toBe(fire);
          previous = fire;
        }
      }),
      { numRuns: 200 },
    );
  });

  test('Day fires at HH:MM local, or at the first minute after a skipped HH:MM, on consecutive days', () => {
    fc.assert(
      fc.property(localTimeArb, zoneArb, instantArb, (time, zone, after) => {
        const fires = nextFires([day(time)], zone, after, 3);
        const expected = parseLocalTime(time);
        if (!expected) throw new Error(`bad time ${time}`);
        const target = `${String(expected.hour).padStart(2, '0')}:${String(expected.minute).padStart(2, '0')}`;
        let previousDate: DateTime | undefined;
        for (const fire of fires) {
          const local = DateTime.fromMillis(fire, { zone });
          const shown = local.toFormat('HH:mm');
          if (shown !== target) {
            // Only when HH:MM was skipped: a minute earlier the clock showed a time before HH:MM.
            expect(DateTime.fromMillis(fire - MINUTE, { zone }).toFormat('HH:mm') < target).toBe(true);
            expect(shown > target).toBe(true);
          }
          expect(isRepeat(fire, clockOf(zone))).toBe(false);
          if (previousDate) expect(local.startOf('day').diff(previousDate, 'days').days).toBe(1);
          previousDate = local.startOf('day');
        }
      }),
      { numRuns: 200 },
    );
  });

  test('Day and window fires match a minute-by-minute scan of the clock (30 hours ahead)', () => {
    const scanTrigger = fc.oneof(
      localTimeArb.map(day),
      // start_when near the instants scanned, so that it often cuts a window.
      windowArb(startWhenArb(instantArb)),
    );
    fc.assert(
      fc.property(scanTrigger, zoneArb, instantArb, (trigger, zone, after) => {
        const clock = clockOf(zone);
        const startWhen = trigger.type === 'Day' ? 0 : (parseStartWhen(trigger.start_when, zone) ?? Infinity);
        const firesAt = (instant: number) =>
          trigger.type === 'Day'
            ? dayFiresAt(trigger.start_when, clock, instant)
            : windowFiresAt(trigger as WindowTrigger, startWhen, clock, instant);
        const horizon = after + 30 * 60 * MINUTE;
        let scanned: number | undefined;
        for (let instant = Math.floor(after / MINUTE) * MINUTE + MINUTE; instant <= horizon; instant += MINUTE) {
          if (firesAt(instant)) {
            scanned = instant;
            break;
          }
        }
        const fire = nextFire([trigger], zone, after);
        if (scanned !== undefined) expect(fire === undefined ? undefined : iso(fire)).toBe(iso(scanned));
        else expect(fire === undefined || fire > horizon).toBe(true);
      }),
      // Each case scans 1,800 minutes of the clock: 100 cases a run, new ones each run.
      { numRuns: 100 },
    );
  });
});
