/**
 * zone-clock.ts reads time zones through Intl where the schedule code used Luxon: checked here against
 * Luxon (the tests' reference, test/support/reference-trigger-engine.ts) on every zone the runtime
 * knows, at random instants of the horizon and around each zone's transitions, where gaps and overlaps are.
 */
import fc from 'fast-check';
import { DateTime, FixedOffsetZone, IANAZone } from 'luxon';
import { describe, expect, test } from 'vitest';
import { horizonEnd, horizonStart } from '#functions/core/schedules/instants.ts';
import { instantsOfWall, isKnownZone, localIso, parseIsoDateTime, wallOf } from '#functions/core/schedules/zone-clock.ts';
import { expectEqual, expectSame } from '#test/support/loop-expect.ts';

const MINUTE = 60_000;
const HOUR = 3_600_000;
const WEEK = 7 * 24 * HOUR;
const zones = Intl.supportedValuesOf('timeZone');
const zoneArb = fc.oneof(
  fc.constantFrom(...zones),
  fc.constantFrom(
    'America/New_York',
    'Australia/Lord_Howe',
    'Pacific/Chatham',
    'Africa/Monrovia',
    'UTC',
    'utc',
    'GMT',
    'Etc/UTC',
  ),
);
const instantArb = fc.integer({ min: horizonStart, max: horizonEnd - 1 });

/** The wall time Luxon gives for `instant` in `zone`. */
const luxonWall = (instant: number, zone: string) =>
  DateTime.fromMillis(instant, { zone }).setZone('utc', { keepLocalTime: true }).toMillis();

/**
 * Instants of `zone`'s offset changes from `from` to `to`: a week whose ends differ holds one (transitions
 * are months apart), found by halving to the minute.
 */
function transitions(zone: string, from: number, to: number): number[] {
  const found: number[] = [];
  // Found with the code under test (fast), checked below against Luxon.
  const offset = (instant: number) => wallOf(instant, zone) - instant;
  for (let start = from; start < to; start += WEEK) {
    let [low, high] = [start, start + WEEK];
    if (offset(low) === offset(high)) continue;
    while (high - low > MINUTE) {
      const middle = low + Math.floor((high - low) / 2 / MINUTE) * MINUTE;
      if (offset(middle) === offset(low)) low = middle;
      else high = middle;
    }
    found.push(high);
  }
  return found;
}

describe('zone-clock agrees with Luxon', () => {
  test('on which zones exist', () => {
    for (const zone of [
      ...zones,
      'UTC',
      'utc',
      'GMT',
      'Etc/GMT+3',
      'america/sao_paulo',
      '',
      'Mars/Olympus',
      'UTC+3',
      '+03:00',
      'EST5EDT',
    ]) {
      expect(isKnownZone(zone), zone).toBe(IANAZone.isValidZone(zone));
    }
  });

  test('on the wall time at any instant, the instants of any wall time, and the local text', () => {
    fc.assert(
      fc.property(zoneArb, instantArb, (zone, instant) => {
        expectSame(wallOf(instant, zone), luxonWall(instant, zone));
        // The instant is one of those the clock shows its wall time at, and every other one shows it too.
        const wall = wallOf(instant, zone);
        const shown = instantsOfWall(wall, zone);
        expect(shown).toContain(instant);
        for (const other of shown) expectSame(luxonWall(other, zone), wall);
        const local = DateTime.fromMillis(instant, { zone });
        const written = Number.isInteger(local.offset)
          ? local
          : local.setZone(FixedOffsetZone.instance(Math.round(local.offset)));
        expectSame(localIso(instant, zone), written.toISO({ suppressMilliseconds: true }));
      }),
      { numRuns: 1_000 },
    );
  });

  test.each([
    'America/New_York',
    'Australia/Lord_Howe',
    'America/Santiago',
    'Pacific/Chatham',
    'Africa/Monrovia',
    'Pacific/Apia',
  ])('on every wall minute around each kind of transition of %s from 1970 to 2040, gaps and overlaps included', (zone) => {
    const found = transitions(zone, horizonStart, Date.UTC(2040, 0, 1));
    expect(found.length).toBeGreaterThan(0);
    // Each kind of change (the offsets before and after) where it first happens, and every change of 2026 to
    // 2028: the same kind elsewhere is the same arithmetic.
    const kinds = new Set<string>();
    const checked = found.filter((transition) => {
      const kind = `${wallOf(transition - MINUTE, zone) - transition} ${wallOf(transition, zone) - transition}`;
      const first = !kinds.has(kind);
      kinds.add(kind);
      return first || (transition >= Date.UTC(2026, 0, 1) && transition < Date.UTC(2029, 0, 1));
    });
    for (const transition of checked) {
      // Luxon's instant-to-wall reading (no guess in it) of every minute of a day around the transition
      // gives, for each wall time near it, every instant that shows it.
      const showing = new Map<number, number[]>();
      // Walls of Africa/Monrovia's -0:44:30 fall on half minutes: read every half minute there.
      const step = zone === 'Africa/Monrovia' ? MINUTE / 2 : MINUTE;
      for (let instant = transition - 4 * HOUR; instant <= transition + 4 * HOUR; instant += step) {
        const wall = luxonWall(instant, zone);
        showing.set(wall, [...(showing.get(wall) ?? []), instant]);
      }
      // The walls of the two hours around it (a gap shows none of its minutes).
      const near = luxonWall(transition - HOUR, zone);
      for (let wall = near; wall <= near + 2 * HOUR; wall += step) {
        expectEqual(instantsOfWall(wall, zone), showing.get(wall) ?? [], `${zone} wall ${new Date(wall).toISOString()}`);
      }
    }
  });

  test('on reading ISO date-times of the schema', () => {
    const fieldArb = fc.tuple(
      fc.integer({ min: 1969, max: 2101 }),
      fc.integer({ min: 0, max: 13 }),
      fc.integer({ min: 0, max: 32 }),
      fc.integer({ min: 0, max: 25 }),
      fc.integer({ min: 0, max: 60 }),
      fc.option(fc.tuple(fc.integer({ min: 0, max: 60 }), fc.option(fc.stringMatching(/^\d{1,9}$/)))),
      fc.constantFrom('', 'Z', '+05:45', '-03:00', '+00:00', '-23:59', '+14:00'),
    );
    const pad = (value: number, width = 2) => String(value).padStart(width, '0');
    fc.assert(
      fc.property(fieldArb, ([year, month, day, hour, minute, seconds, offset]) => {
        const text = `${pad(year, 4)}-${pad(month)}-${pad(day)}T${pad(hour)}:${pad(minute)}${seconds ? `:${pad(seconds[0])}${seconds[1] ? `.${seconds[1]}` : ''}` : ''}${offset}`;
        const luxon = DateTime.fromISO(text, offset === '' ? { zone: 'utc' } : { setZone: true });
        const parsed = parseIsoDateTime(text);
        if (!luxon.isValid) {
          expect(parsed, text).toBeUndefined();
          return;
        }
        expect(parsed, text).toBeDefined();
        expectSame(offset === '' ? parsed?.wall : (parsed?.wall ?? 0) - (parsed?.offset ?? 0), luxon.toMillis(), text);
        expectSame(parsed?.offset === undefined, offset === '');
      }),
      { numRuns: 2_000 },
    );
    for (const text of [
      '2026-03-08T24:00',
      '2026-03-08T24:00:00.000Z',
      '2026-03-08T24:00:01',
      '2028-02-29T00:00',
      '2027-02-29T00:00',
      '2100-02-29T00:00',
      '2000-02-29T00:00',
      '2026-01-01T00:00:00.29Z',
      '2026-01-01T00:00:00.5705Z',
    ]) {
      const luxon = DateTime.fromISO(text, text.endsWith('Z') ? { setZone: true } : { zone: 'utc' });
      expect(parseIsoDateTime(text)?.wall, text).toBe(luxon.isValid ? luxon.toMillis() : undefined);
    }
  });
});
