/**
 * `expect` for loops that run it thousands of times: property runs, and sweeps over every length, minute or
 * wall time. Each helper decides in plain JavaScript only what it can decide exactly as the matcher would, and
 * otherwise (a failure, or a value it does not know) calls vitest's `expect` with the same matcher, so a failure
 * reads as it always did (its first frame is here, the test's line the next). An `expect` call does about 10 µs
 * of bookkeeping (counting the assertion, building chai's assertion object) before it compares anything: the
 * unit run made 276,000 of them, nine in ten in the loops of seven files.
 */
import { expect } from 'vitest';

/** `expect(actual, message).toBe(expected)`: the same comparison, `Object.is`. */
export function expectSame(actual: unknown, expected: unknown, message?: string): void {
  if (!Object.is(actual, expected)) expect(actual, message).toBe(expected);
}

const isPlainObject = (value: object) => [Object.prototype, null].includes(Object.getPrototypeOf(value) as object | null);

/**
 * True only for the same plain data: primitives alike by `Object.is`, and arrays and plain objects (their prototype
 * Object's or none) with the same own keys holding the same plain data. False for anything else, which `toEqual`
 * then decides (class instances, maps, iterables, holes in arrays).
 */
function samePlainData(actual: unknown, expected: unknown): boolean {
  if (Object.is(actual, expected)) return true;
  if (typeof actual !== 'object' || typeof expected !== 'object' || actual === null || expected === null) return false;
  if (Array.isArray(actual) ? !Array.isArray(expected) : !isPlainObject(actual) || !isPlainObject(expected)) return false;
  const keys = Reflect.ownKeys(actual);
  if (keys.length !== Reflect.ownKeys(expected).length) return false;
  return keys.every(
    (key) =>
      Object.hasOwn(expected, key) &&
      samePlainData((actual as Record<PropertyKey, unknown>)[key], (expected as Record<PropertyKey, unknown>)[key]),
  );
}

/** `expect(actual, message).toEqual(expected)`. */
export function expectEqual(actual: unknown, expected: unknown, message?: string): void {
  if (!samePlainData(actual, expected)) expect(actual, message).toEqual(expected);
}

/** Whether `pattern` reads `actual` as `toMatch` does (`String.prototype.match`), or undefined where only `toMatch` can say. */
const matches = (actual: unknown, pattern: RegExp) =>
  // A sticky pattern starts at its lastIndex, which a first match moves.
  typeof actual === 'string' && !pattern.sticky ? actual.match(pattern) !== null : undefined;

/** `expect(actual, message).toMatch(pattern)`. */
export function expectMatch(actual: unknown, pattern: RegExp, message?: string): void {
  if (matches(actual, pattern) !== true) expect(actual, message).toMatch(pattern);
}

/** `expect(actual, message).not.toMatch(pattern)`. */
export function expectNoMatch(actual: unknown, pattern: RegExp, message?: string): void {
  if (matches(actual, pattern) !== false) expect(actual, message).not.toMatch(pattern);
}

/** `expect(actual, message).toBeLessThanOrEqual(limit)`: the matcher refuses what is not a number. */
export function expectAtMost(actual: number, limit: number, message?: string): void {
  if (typeof actual !== 'number' || typeof limit !== 'number' || !(actual <= limit)) {
    expect(actual, message).toBeLessThanOrEqual(limit);
  }
}

/** `expect(actual, message).toBeLessThan(limit)`. */
export function expectBelow(actual: number, limit: number, message?: string): void {
  if (typeof actual !== 'number' || typeof limit !== 'number' || !(actual < limit)) expect(actual, message).toBeLessThan(limit);
}
