/**
 * The horizon (docs/schedules.md, Horizon): every instant a schedule takes or gives lies from
 * 1970-01-01T00:00:00Z up to, not including, 2100-01-01T00:00:00Z; a window trigger's period is at
 * most 525,600. A start_when or period outside is a 400 at its field; a next fire that would fall
 * at or after the end is no next fire. So every date the schedule routes answer is an RFC 3339
 * date-time with a four-digit year, and the due index's keys sort in time order.
 */
import { readFileSync } from 'node:fs';
import fc from 'fast-check';
import { DateTime } from 'luxon';
import { describe, expect, test } from 'vitest';
import {
  horizonEnd as engineHorizonEnd,
  horizonStart as engineHorizonStart,
  instantIn,
  maxWindowPeriod,
} from '#functions/core/schedules/instants.ts';
import { scheduleFileErrors } from '#functions/core/schedules/schedule-file.ts';
import { dueIndexEntry } from '#functions/core/schedules/schedule-repository.ts';
import type { ScheduleFile, Trigger, WindowTrigger } from '#functions/core/schedules/schedule-types.ts';
import { nextFire, nextFires } from '#functions/core/schedules/trigger-engine.ts';
import { expectAtMost, expectBelow, expectEqual, expectMatch, expectSame } from '#test/support/loop-expect.ts';

const DAY = 86_400_000;
const MINUTE = 60_000;
const at = (iso: string) => Date.parse(iso);
const iso = (ms: number) => new Date(ms).toISOString();

const horizonStart = at('1970-01-01T00:00:00Z');
const horizonEnd = at('2100-01-01T00:00:00Z');
const maxPeriod = 525_600;

/** RFC 3339 date-time (section 5.6), as JSON Schema's `format: date-time` reads it. */
const rfc3339 =
  /^\d{4}-(0[1-9]|1[0-2])-(0[1-9]|[12]\d|3[01])T([01]\d|2[0-3]):[0-5]\d:([0-5]\d|60)(\.\d+)?(Z|[+-]([01]\d|2[0-3]):[0-5]\d)$/;
const expectDateTime = (text: string | null | undefined, instant?: number) => {
  expectMatch(text, rfc3339);
  if (instant !== undefined) expectSame(DateTime.fromISO(text as string, { setZone: true }).toMillis(), instant);
};

const zones = Intl.supportedValuesOf('timeZone');
const dstZones = ['America/New_York', 'Europe/Berlin', 'Australia/Lord_Howe', 'Pacific/Chatham', 'America/Santiago'];
const zoneArb = fc.oneof(
  fc.constantFrom(...dstZones),
  fc.constantFrom(...zones),
  fc.constantFrom('Pacific/Kiritimati', 'Etc/GMT+12'),
);
const localTimeArb = fc
  .tuple(fc.integer({ min: 0, max: 23 }), fc.integer({ min: 0, max: 59 }))
  .map(([h, m]) => `${String(h).padStart(2, '0')}:${String(m).padStart(2, '0')}`);
const offsetArb = fc.constantFrom('Z', '', '+14:00', '-12:00', '+05:45', '-00:30', '+23:59', '-23:59');
/** A start_when text whose instant is anywhere in the accepted range, often at its edges. */
const acceptedStartWhenArb = fc
  .tuple(
    fc.oneof(
      fc.integer({ min: horizonStart + 2 * DAY, max: horizonEnd - 2 * DAY }),
      fc.integer({ min: horizonEnd - 4 * DAY, max: horizonEnd - 2 * DAY }),
    ),
    fc.constantFrom('Z', '+05:45', '-03:00'),
  )
  .map(([ms, offset]) => {
    const local = DateTime.fromMillis(ms, { zone: offset === 'Z' ? 'utc' : `UTC${offset}` });
    return `${local.toFormat("yyyy-MM-dd'T'HH:mm")}${offset}`;
  });
const windowArb = (startWhen: fc.Arbitrary<string>): fc.Arbitrary<WindowTrigger> =>
  fc.record({
    type: fc.constantFrom('Hour' as const, 'Minute' as const),
    period: fc.oneof(
      fc.integer({ min: 1, max: maxPeriod }),
      fc.integer({ min: 1, max: 90 }),
      fc.constantFrom(1, 24, 1440, maxPeriod),
    ),
    start_when: startWhen,
    start_time: localTimeArb,
    end_time: localTimeArb,
  });
const triggerArb: fc.Arbitrary<Trigger> = fc.oneof(
  localTimeArb.map((time): Trigger => ({ type: 'Day', start_when: time })),
  fc
    .tuple(fc.integer({ min: 0, max: 6 }), localTimeArb)
    .map(([period, time]): Trigger => ({ type: 'Week', period, start_when: time })),
  fc
    .tuple(fc.integer({ min: 1, max: 31 }), localTimeArb)
    .map(([period, time]): Trigger => ({ type: 'Month', period, start_when: time })),
  windowArb(acceptedStartWhenArb),
);
/** The instant fires are asked from: a request's or a tick's now, up to the horizon's last days. */
const afterArb = fc.oneof(
  fc.integer({ min: at('1972-01-01T00:00Z'), max: horizonEnd - 1 }),
  fc.integer({ min: horizonEnd - 5 * DAY, max: horizonEnd + DAY }),
);

const file = (triggers: Trigger[], timezone = 'UTC'): ScheduleFile => ({
  header: { id: 1 },
  body: { nome: 'Horizon', ativo: true, timezone, flows: [{ flow_etl_id: 1, context: 'full' }], triggers },
});
const windowTrigger = (start_when: string, period = 1, type: 'Hour' | 'Minute' = 'Hour'): WindowTrigger => ({
  type,
  period,
  start_when,
  start_time: '00:00',
  end_time: '23:59',
});

test('the documented horizon is the one the code and the schema use', () => {
  expect([engineHorizonStart, engineHorizonEnd, maxWindowPeriod]).toEqual([horizonStart, horizonEnd, maxPeriod]);
  const schema = JSON.parse(readFileSync(new URL('../../schemas/schedule.v2.schema.json', import.meta.url), 'utf8'));
  expect(schema.$defs.windowTrigger.properties.period.maximum).toBe(maxPeriod);
  const docs = readFileSync(new URL('../../docs/schedules.md', import.meta.url), 'utf8');
  for (const text of ['1970-01-01T00:00:00Z', '2100-01-01T00:00:00Z', '525,600']) expect(docs).toContain(text);
});

describe('computed instants stay within the horizon', () => {
  test('the reported schedule: start_when 9999-12-31T23:30Z has no next fire (not +010000-01-01)', () => {
    const triggers = [windowTrigger('9999-12-31T23:30:00Z')];
    expect(nextFire(triggers, 'UTC', at('2026-11-25T00:00Z'))).toBeUndefined();
    expect(nextFires(triggers, 'America/New_York', at('2026-11-25T00:00Z'), 100)).toEqual([]);
    expect(nextFire([windowTrigger('9999-12-31T23:30-12:00')], 'UTC', at('2026-11-25T00:00Z'))).toBeUndefined();
  });

  test('fires just before the end are given, none at or after it', () => {
    const triggers = [windowTrigger('2099-12-31T23:00Z', 15, 'Minute')];
    expect(nextFires(triggers, 'UTC', at('2026-01-01T00:00Z'), 10).map(iso)).toEqual([
      '2099-12-31T23:00:00.000Z',
      '2099-12-31T23:15:00.000Z',
      '2099-12-31T23:30:00.000Z',
      '2099-12-31T23:45:00.000Z',
    ]);
    expect(nextFire([{ type: 'Day', start_when: '00:00' }], 'UTC', at('2099-12-31T00:00Z'))).toBeUndefined();
    expect(nextFire([{ type: 'Day', start_when: '00:00' }], 'UTC', horizonEnd + DAY)).toBeUndefined();
  });

  test('a zone whose offset then had seconds (Africa/Monrovia, -0:44:30 until 1972) still fires on whole minutes, the next one', () => {
    const fires = nextFires([{ type: 'Day', start_when: '00:00' }], 'Africa/Monrovia', at('1972-01-01T00:00Z'), 3);
    expect(fires.map(iso)).toEqual(['1972-01-01T00:45:00.000Z', '1972-01-02T00:45:00.000Z', '1972-01-03T00:45:00.000Z']);
  });

  test('such a fire is answered in local time as the very instant: the offset rounded to the minute, never one naming 30 s earlier', () => {
    // The property test's counterexample (seed 1026787530): RFC 3339 offsets have no seconds.
    const [fire = 0] = nextFires([{ type: 'Week', period: 0, start_when: '00:00' }], 'Africa/Monrovia', 63_072_000_000, 1);
    expect(iso(fire)).toBe('1972-01-02T00:45:00.000Z');
    const { local } = instantIn(fire, 'Africa/Monrovia');
    expect(local).toBe('1972-01-02T00:01:00-00:44');
    expect(Date.parse(local)).toBe(fire);
  });

  test('property: every computed fire is a whole minute within the horizon, answered as RFC 3339 (UTC and local)', () => {
    fc.assert(
      fc.property(fc.array(triggerArb, { minLength: 1, maxLength: 4 }), zoneArb, afterArb, (triggers, zone, after) => {
        const fires = nextFires(triggers, zone, after, 8);
        let previous = after;
        for (const fire of fires) {
          expectBelow(previous, fire);
          expectSame(fire % MINUTE, 0);
          expectAtMost(horizonStart, fire);
          expectBelow(fire, horizonEnd);
          const { utc, local } = instantIn(fire, zone);
          expectDateTime(utc, fire);
          expectDateTime(local, fire);
          previous = fire;
        }
        expectSame(nextFire(triggers, zone, after), fires[0]);
      }),
      { numRuns: 300 },
    );
  });

  test("property: the due index's keys of computed fires sort in time order", () => {
    fc.assert(
      fc.property(fc.array(triggerArb, { minLength: 1, maxLength: 3 }), zoneArb, afterArb, (triggers, zone, after) => {
        const fires = nextFires(triggers, zone, after, 4);
        // The latest first, of a tenant and schedule that sort first: time must still order them.
        const keysOf = fires.map((fire, index) => dueIndexEntry(1 + fires.length - index, 1, instantIn(fire, zone).utc).gsi1sk);
        expectEqual([...keysOf].sort(), keysOf);
        for (const key of keysOf) expectSame(key < `${iso(horizonEnd)}`, true);
      }),
      { numRuns: 200 },
    );
  });

  test('the due index refuses an instant that is not a UTC instant within the horizon', () => {
    for (const bad of ['+010000-01-01T00:00:00.000Z', '2100-01-01T00:00:00.000Z', '2027-01-01T00:00:00Z', 'soon']) {
      expect(() => dueIndexEntry(1, 1, bad), bad).toThrow();
    }
    expect(dueIndexEntry(1, 1, '2099-12-31T23:59:00.000Z').gsi1sk.startsWith('2099-12-31T23:59:00.000Z#')).toBe(true);
  });
});

describe('inputs outside the horizon are a 400 at their field', () => {
  const errorsAt = (triggers: Trigger[], timezone = 'UTC') =>
    scheduleFileErrors(file(triggers, timezone), 'minutes').map((error) => error.pointer);

  test.each([
    ['9999-12-31T23:30:00Z', 'UTC'],
    ['9999-12-31T23:30-12:00', 'UTC'],
    ['2100-01-01T00:00:00Z', 'UTC'],
    ['2099-12-31T23:59-00:01', 'UTC'],
    // Local to the zone: 2099-12-31T20:00 in New York is 2100-01-01T01:00Z.
    ['2099-12-31T20:00', 'America/New_York'],
    ['1969-12-31T23:59:59.999Z', 'UTC'],
    ['0000-01-01T00:00', 'UTC'],
    ['1970-01-01T08:00', 'Asia/Tokyo'],
  ])('start_when %s (%s)', (startWhen, zone) => {
    expect(errorsAt([{ type: 'Day', start_when: '08:00' }, windowTrigger(startWhen)], zone)).toEqual([
      '/body/triggers/1/start_when',
    ]);
  });

  test.each([
    ['2099-12-31T23:59:59.999Z', 'UTC'],
    ['1970-01-01T00:00:00Z', 'UTC'],
    ['2099-12-31T18:59', 'America/New_York'],
  ])('start_when %s (%s) is accepted', (startWhen, zone) => {
    expect(errorsAt([windowTrigger(startWhen)], zone)).toEqual([]);
  });

  test('property: a start_when anywhere in the range is accepted; anywhere out of it is refused at its pointer', () => {
    const outside = fc
      .tuple(
        fc.oneof(fc.integer({ min: 2100, max: 9999 }), fc.integer({ min: 0, max: 1968 })),
        fc.integer({ min: 1, max: 12 }),
        offsetArb,
      )
      .map(([year, month, offset]) => `${String(year).padStart(4, '0')}-${String(month).padStart(2, '0')}-15T12:00${offset}`);
    fc.assert(
      fc.property(acceptedStartWhenArb, outside, zoneArb, (inside, beyond, zone) => {
        expect(errorsAt([windowTrigger(inside)], zone)).toEqual([]);
        expect(errorsAt([windowTrigger(beyond)], zone)).toEqual(['/body/triggers/0/start_when']);
      }),
      { numRuns: 200 },
    );
  });

  test.each([maxPeriod + 1, 1e9, 2 ** 53, 1e308])('period %d is refused at its pointer', (period) => {
    expect(errorsAt([windowTrigger('2027-01-01T00:00Z', period)])).toContain('/body/triggers/0/period');
    expect(errorsAt([windowTrigger('2027-01-01T00:00Z', period, 'Minute')])).toContain('/body/triggers/0/period');
  });

  test('period up to the maximum is accepted, and fires once a window when longer than it', () => {
    expect(errorsAt([windowTrigger('2027-01-01T00:00Z', maxPeriod)])).toEqual([]);
    expect(nextFires([windowTrigger('2027-01-01T00:00Z', maxPeriod)], 'UTC', at('2026-12-31T12:00Z'), 3).map(iso)).toEqual([
      '2027-01-01T00:00:00.000Z',
      '2027-01-02T00:00:00.000Z',
      '2027-01-03T00:00:00.000Z',
    ]);
  });

  test('a period past the maximum already stored (or sent to the engine) does not break the arithmetic', () => {
    for (const period of [2 ** 53, 1e308, Number.MAX_VALUE]) {
      const fires = nextFires([windowTrigger('2027-01-01T00:00Z', period)], 'UTC', at('2027-01-01T00:00Z'), 2);
      for (const fire of fires) expectDateTime(iso(fire), fire);
    }
  });
});
