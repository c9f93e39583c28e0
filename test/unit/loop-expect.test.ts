import { describe, expect, test } from 'vitest';
import { expectAtMost, expectBelow, expectEqual, expectMatch, expectNoMatch, expectSame } from '#test/support/loop-expect.ts';

/** The message `work` fails with, or undefined when it passes. */
function failure(work: () => void): string | undefined {
  try {
    work();
  } catch (error) {
    return (error as Error).message;
  }
  return undefined;
}

/** Iterates its one value, which nothing else shows: toEqual tells two apart by what they iterate. */
class Box {
  readonly #value: number;
  constructor(value: number) {
    this.#value = value;
  }
  *[Symbol.iterator]() {
    yield this.#value;
  }
}
const key = Symbol('key');
/** [ <hole>, 1 ]. */
const holeThenOne = () => Object.assign(new Array<unknown>(2), { 1: 1 });
/** A sticky /a/ at index 1: 'ab' has no a there (a first match resets lastIndex to 0, where a second would find one). */
const stickyA = () => Object.assign(/a/y, { lastIndex: 1 });

describe('each loop assertion passes and fails where its matcher does, with its message', () => {
  const cases: Array<[string, () => void, () => void]> = [
    ['same: equal', () => expectSame('a', 'a'), () => expect('a').toBe('a')],
    ['same: different', () => expectSame('a', 'b', 'why'), () => expect('a', 'why').toBe('b')],
    ['same: -0 and 0', () => expectSame(-0, 0), () => expect(-0).toBe(0)],
    ['same: NaN', () => expectSame(Number.NaN, Number.NaN), () => expect(Number.NaN).toBe(Number.NaN)],
    [
      'equal: deeply',
      () => expectEqual({ a: [1, { b: 2 }] }, { a: [1, { b: 2 }] }),
      () => expect({ a: [1, { b: 2 }] }).toEqual({ a: [1, { b: 2 }] }),
    ],
    [
      'equal: an undefined property (toEqual ignores it)',
      () => expectEqual({ a: 1, b: undefined }, { a: 1 }),
      () => expect({ a: 1, b: undefined }).toEqual({ a: 1 }),
    ],
    ['equal: different', () => expectEqual([1, 2], [1, 3], 'why'), () => expect([1, 2], 'why').toEqual([1, 3])],
    [
      'equal: a hole and undefined (toEqual ignores holes)',
      () => expectEqual(holeThenOne(), [undefined, 1]),
      () => expect(holeThenOne()).toEqual([undefined, 1]),
    ],
    [
      'equal: maps',
      () => expectEqual(new Map([[1, { a: 2 }]]), new Map([[1, { a: 2 }]])),
      () => expect(new Map([[1, { a: 2 }]])).toEqual(new Map([[1, { a: 2 }]])),
    ],
    ['equal: symbol keys', () => expectEqual({ [key]: 1 }, { [key]: 2 }), () => expect({ [key]: 1 }).toEqual({ [key]: 2 })],
    [
      'equal: what iterates differently, with nothing else to tell',
      () => expectEqual(new Box(1), new Box(2)),
      () => expect(new Box(1)).toEqual(new Box(2)),
    ],
    ['match', () => expectMatch('abc', /^a/), () => expect('abc').toMatch(/^a/)],
    ['match: no', () => expectMatch('abc', /^b/, 'why'), () => expect('abc', 'why').toMatch(/^b/)],
    ['match: not a string', () => expectMatch(undefined, /^b/), () => expect(undefined).toMatch(/^b/)],
    ['match: sticky, from its lastIndex', () => expectMatch('ab', stickyA()), () => expect('ab').toMatch(stickyA())],
    ['no match', () => expectNoMatch('abc', /^b/), () => expect('abc').not.toMatch(/^b/)],
    ['no match: it matches', () => expectNoMatch('abc', /^a/, 'why'), () => expect('abc', 'why').not.toMatch(/^a/)],
    ['at most: equal', () => expectAtMost(2, 2), () => expect(2).toBeLessThanOrEqual(2)],
    ['at most: more', () => expectAtMost(3, 2, 'why'), () => expect(3, 'why').toBeLessThanOrEqual(2)],
    ['at most: NaN', () => expectAtMost(Number.NaN, 2), () => expect(Number.NaN).toBeLessThanOrEqual(2)],
    ['at most: not a number', () => expectAtMost(null as never, 2), () => expect(null).toBeLessThanOrEqual(2)],
    ['below', () => expectBelow(1, 2), () => expect(1).toBeLessThan(2)],
    ['below: equal', () => expectBelow(2, 2, 'why'), () => expect(2, 'why').toBeLessThan(2)],
  ];
  test.each(cases)('%s', (_name, loop, matcher) => {
    expect(failure(loop)).toBe(failure(matcher));
  });

  test('the failing cases fail', () => {
    expect(cases.filter(([, loop]) => failure(loop) !== undefined).map(([name]) => name)).toEqual([
      'same: different',
      'same: -0 and 0',
      'equal: different',
      'equal: symbol keys',
      'equal: what iterates differently, with nothing else to tell',
      'match: no',
      'match: not a string',
      'match: sticky, from its lastIndex',
      'no match: it matches',
      'at most: more',
      'at most: NaN',
      'at most: not a number',
      'below: equal',
    ]);
  });
});
