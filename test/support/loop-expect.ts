/**
 * `expect` for loops that run it thousands of times: property runs, and sweeps over every length, minute or
 * wall time. Each helper compares in plain JavaScript, and calls vitest's `expect` with the same matcher only
 * when that comparison fails, so a failure reads as it always did. An `expect` call does about 10 µs of
 * bookkeeping (counting the assertion, building chai's assertion object) before it compares anything: the unit
 * run made 276,000 of them, nine in ten in the loops of eight files.
 */
import { isDeepStrictEqual } from 'node:util';
import { expect } from 'vitest';

/** `expect(actual, message).toBe(expected)`: the same comparison, `Object.is`. */
export function expectSame(actual: unknown, expected: unknown, message?: string): void {
  if (!Object.is(actual, expected)) expect(actual, message).toBe(expected);
}

/** `expect(actual, message).toEqual(expected)`: values deeply and strictly equal are equal to `toEqual`, the looser. */
export function expectEqual(actual: unknown, expected: unknown, message?: string): void {
  if (!isDeepStrictEqual(actual, expected)) expect(actual, message).toEqual(expected);
}

/** `expect(actual, message).toMatch(pattern)`: the same test, `String.prototype.match`, and the same refusal of what is not a string. */
export function expectMatch(actual: unknown, pattern: RegExp, message?: string): void {
  if (typeof actual !== 'string' || actual.match(pattern) === null) expect(actual, message).toMatch(pattern);
}

/** `expect(actual, message).not.toMatch(pattern)`. */
export function expectNoMatch(actual: unknown, pattern: RegExp, message?: string): void {
  if (typeof actual !== 'string' || actual.match(pattern) !== null) expect(actual, message).not.toMatch(pattern);
}

/** `expect(actual, message).toBeLessThanOrEqual(limit)`. */
export function expectAtMost(actual: number, limit: number, message?: string): void {
  if (!(actual <= limit)) expect(actual, message).toBeLessThanOrEqual(limit);
}

/** `expect(actual, message).toBeLessThan(limit)`. */
export function expectBelow(actual: number, limit: number, message?: string): void {
  if (!(actual < limit)) expect(actual, message).toBeLessThan(limit);
}
