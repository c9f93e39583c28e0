/**
 * Any text: strings of any code point but a lone surrogate, as fast-check's `fc.string({ unit: 'binary' })` makes
 * them, from the same arbitrary (`fc.nat` over the 1,112,064 code points, mapped). Only the way back differs. A
 * string arbitrary writes its dangerous strings (`__proto__` and the like) into what it makes by reading them back
 * into its unit's choices, and fast-check's own unit does that with a map of every code point, built once per worker
 * thread (about 0.7 CPU-s each time, in three threads of the unit run). This one computes the choice.
 */
import fc from 'fast-check';

const surrogates = { first: 0xd800, count: 0x800 };
/** The number of code points that are not surrogates. */
export const codePointCount = 0x110000 - surrogates.count;

/** Choice `index`: code point `index`, or past the surrogates, shifted over them. */
export const codePointOf = (index: number) => String.fromCodePoint(index < surrogates.first ? index : index + surrogates.count);

/** The choice that makes `value`: throws when `value` is not one code point, or is a lone surrogate. */
export function choiceOf(value: unknown): number {
  const point = typeof value === 'string' ? value.codePointAt(0) : undefined;
  if (
    point === undefined ||
    String.fromCodePoint(point) !== value ||
    (point >= surrogates.first && point < surrogates.first + surrogates.count)
  ) {
    throw new Error(`${JSON.stringify(value)} is not one code point`);
  }
  return point < surrogates.first ? point : point - surrogates.count;
}

export const anyCodePoint = fc.nat({ max: codePointCount - 1 }).map(codePointOf, choiceOf);

/** `fc.string({ unit: 'binary', ...constraints })`. */
export const anyText = (constraints: Omit<fc.StringConstraints, 'unit'> = {}) =>
  fc.string({ ...constraints, unit: anyCodePoint });
