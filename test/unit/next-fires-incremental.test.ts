/**
 * The next fires of a schedule are computed incrementally: each trigger parsed once and walked
 * forward from its previous fire, identical triggers once, the triggers' sequences merged. Checked
 * here against the engine as it was (each fire re-parsing and re-scanning every trigger), kept in
 * test/support/reference-trigger-engine.ts, and for what it costs: time zone readings that grow with
 * count + triggers, not count × triggers.
 */
import fc from 'fast-check';
import { afterEach, describe, expect, test, vi } from 'vitest';
import type { Trigger, WindowTrigger } from '#functions/core/schedules/schedule-types.ts';
import { nextFire, nextFires } from '#functions/core/schedules/trigger-engine.ts';
import { referenceNextFire, referenceNextFires } from '#test/support/reference-trigger-engine.ts';

const MINUTE = 60_000;
const DAY = 86_400_000;
const at = (iso: string) => Date.parse(iso);
const iso = (ms: number) => new Date(ms).toISOString();
/** The horizon's end (docs/schedules.md, Horizon): no fire at or after it. */
const horizonEnd = at('2100-01-01T00:00:00Z');

const dstZones = ['America/New_York', 'Europe/Berlin', 'Australia/Lord_Howe', 'America/Santiago', 'Pacific/Chatham'];
const zoneArb = fc.oneof(
  fc.constantFrom(...dstZones),
  fc.constantFrom(...Intl.supportedValuesOf('timeZone')),
  fc.constant('UTC'),
);

const localTimeArb = fc.oneof(
  fc
    .tuple(fc.integer({ min: 0, max: 23 }), fc.integer({ min: 0, max: 59 }), fc.boolean())
    .map(([h, m, pad]) => `${pad ? String(h).padStart(2, '0') : h}:${String(m).padStart(2, '0')}`),
  fc.constantFrom('00:00', '01:00', '01:30', '02:00', '02:30', '02:59', '03:00', '23:59'),
);
/** Instants the engine is asked from: mostly now-ish, sometimes anywhere up to the horizon's end. */
const afterArb = fc.oneof(
  fc.integer({ min: at('2026-01-01T00:00Z'), max: at('2030-12-31T23:59Z') }),
  fc.integer({ min: at('2000-01-01T00:00Z'), max: horizonEnd - 1 }),
  fc.integer({ min: horizonEnd - 3 * DAY, max: horizonEnd - 1 }),
);
/** start_when as an integrator writes it: UTC, with an offset, or local; near `after` or anywhere accepted. */
const startWhenArb = (after: number) =>
  fc
    .tuple(
      fc.oneof(
        fc.integer({ min: after - 3 * DAY, max: after + 3 * DAY }),
        fc.integer({ min: at('1970-01-02T00:00Z'), max: horizonEnd - DAY }),
      ),
      fc.constantFrom('Z', 'local', '+05:45', '-12:00', '+14:00'),
    )
    .map(([ms, form]) => {
      const text = iso(Math.min(Math.max(ms, at('1970-01-02T00:00Z')), horizonEnd - DAY));
      return form === 'Z' ? text : form === 'local' ? text.slice(0, 16) : `${text.slice(0, 16)}${form}`;
    });
const periodArb = fc.oneof(
  fc.integer({ min: 1, max: 30 }),
  fc.integer({ min: 1, max: 1500 }),
  fc.constantFrom(23, 24, 25, 1439, 1440, 525_600),
);
const windowArb = (after: number): fc.Arbitrary<WindowTrigger> =>
  fc.record({
    type: fc.constantFrom('Hour' as const, 'Minute' as const),
    period: periodArb,
    start_when: startWhenArb(after),
    start_time: localTimeArb,
    end_time: localTimeArb,
  });
const triggerArb = (after: number): fc.Arbitrary<Trigger> =>
  fc.oneof(
    localTimeArb.map((time): Trigger => ({ type: 'Day', start_when: time })),
    fc
      .tuple(fc.integer({ min: 0, max: 6 }), localTimeArb)
      .map(([period, time]): Trigger => ({ type: 'Week', period, start_when: time })),
    fc
      .tuple(fc.integer({ min: 1, max: 31 }), localTimeArb)
      .map(([period, time]): Trigger => ({ type: 'Month', period, start_when: time })),
    windowArb(after),
  );
/** Up to 8 triggers, with repeats (an identical trigger is one trigger). */
const scheduleArb = afterArb.chain((after) =>
  fc.tuple(
    fc.constant(after),
    fc
      .array(triggerArb(after), { minLength: 1, maxLength: 5 })
      .chain((triggers) =>
        fc.shuffledSubarray([...triggers, ...triggers], { minLength: 1, maxLength: Math.min(8, 2 * triggers.length) }),
      ),
    zoneArb,
  ),
);

/** The reference's fires, cut at the horizon's end (the reference knows no horizon). */
const referenceFires = (triggers: Trigger[], zone: string, after: number, count: number) => {
  const fires = referenceNextFires(triggers, zone, after, count);
  const end = fires.findIndex((fire) => fire >= horizonEnd);
  return end === -1 ? fires : fires.slice(0, end);
};

describe('incremental next fires', () => {
  test('equal the reference computation (random triggers, repeats, periods up to the maximum, any IANA zone)', () => {
    fc.assert(
      fc.property(scheduleArb, ([after, triggers, zone]) => {
        expect(nextFires(triggers, zone, after, 24).map(iso)).toEqual(referenceFires(triggers, zone, after, 24).map(iso));
        const first = referenceNextFire(triggers, zone, after);
        expect(nextFire(triggers, zone, after)).toBe(first !== undefined && first < horizonEnd ? first : undefined);
      }),
      // 150 cases a run (each run draws new ones); ENGINE_RUNS=5000 for a deeper search after a change to the engine.
      { numRuns: Number(process.env.ENGINE_RUNS ?? 150) },
    );
  }, 600_000);

  test('the reported case: 50 Hour triggers with start_when in the New York gap', () => {
    const triggers = Array.from({ length: 50 }, (): Trigger => ({
      type: 'Hour',
      period: 1,
      start_when: '2027-03-14T02:30',
      start_time: '00:00',
      end_time: '23:59',
    }));
    const after = at('2027-03-13T12:00Z');
    // 50 identical triggers fire as one does (the reference over all 50 takes seconds).
    expect(nextFires(triggers, 'America/New_York', after, 100)).toEqual(
      referenceFires(triggers.slice(0, 1), 'America/New_York', after, 100),
    );
  });
});

describe('what next fires cost', () => {
  afterEach(() => {
    vi.restoreAllMocks();
  });

  /** Time zone readings (zone-clock.ts: one Intl formatToParts each) for one nextFires. */
  function zoneWork(triggers: Trigger[], zone: string, after: number, count: number): number {
    const readings = vi.spyOn(Intl.DateTimeFormat.prototype, 'formatToParts');
    expect(nextFires(triggers, zone, after, count)).toHaveLength(count);
    const calls = readings.mock.calls.length;
    vi.restoreAllMocks();
    // The count is of something: the engine reads the zone through formatToParts, so a fire costs at least one.
    expect(calls).toBeGreaterThanOrEqual(count);
    return calls;
  }

  const gapTrigger = (index: number): WindowTrigger => ({
    type: 'Hour',
    period: 1,
    // Every start_when in the New York gap of 2027-03-14 (02:00-02:59 never shows).
    start_when: `2027-03-14T02:${String(index % 60).padStart(2, '0')}`,
    start_time: `00:${String(index % 60).padStart(2, '0')}`,
    end_time: '23:59',
  });
  const after = at('2027-03-13T12:00Z');

  test.each([12, 25, 50])('%i identical triggers in the DST gap, count 100: about the work of one', (triggers) => {
    const one = zoneWork([gapTrigger(0)], 'America/New_York', after, 100);
    const many = zoneWork(
      Array.from({ length: triggers }, () => gapTrigger(0)),
      'America/New_York',
      after,
      100,
    );
    expect(many).toBeLessThanOrEqual(one + 5 * triggers);
  });

  test.each([12, 25, 50])('%i distinct triggers in the DST gap, count 100: linear in count + triggers', (triggers) => {
    const work = zoneWork(
      Array.from({ length: triggers }, (_, index) => gapTrigger(index)),
      'America/New_York',
      after,
      100,
    );
    // Parsing a start_when in a gap walks at most the gap's 60 minutes (two conversions each); each fire
    // is a few conversions. The engine before took 143,000 for 12 triggers, 405,000 for 50.
    expect(work).toBeLessThanOrEqual(130 * triggers + 5 * 100);
  });

  test('fires are whole minutes', () => {
    for (const fire of nextFires([gapTrigger(7)], 'America/New_York', after, 50)) expect(fire % MINUTE).toBe(0);
  });
});
