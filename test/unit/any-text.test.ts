import fc from 'fast-check';
import { expect, test } from 'vitest';
import { anyCodePoint, anyText, choiceOf, codePointCount, codePointOf } from '#test/support/any-text.ts';

test('the choices are every code point but the surrogates, each read back into its choice', () => {
  expect(codePointCount).toBe(1_112_064);
  const boundaries = [0, 0x7f, 0xd7ff, 0xd800, 0xf7ff, codePointCount - 1];
  expect(boundaries.map(codePointOf)).toEqual(['\u0000', '\u007f', '\ud7ff', '\ue000', '\uffff', '\u{10ffff}']);
  expect(boundaries.map((index) => choiceOf(codePointOf(index)))).toEqual(boundaries);
  fc.assert(
    fc.property(fc.nat({ max: codePointCount - 1 }), (index) => {
      const point = codePointOf(index).codePointAt(0) as number;
      return (point < 0xd800 || point > 0xdfff) && choiceOf(codePointOf(index)) === index;
    }),
  );
});

test('what is not one code point has no choice, and fast-check is told so', () => {
  for (const value of ['', 'ab', '\ud800', '\udfff', '\ud800a', 7, undefined]) {
    expect(() => choiceOf(value), JSON.stringify(value)).toThrow('is not one code point');
    expect(anyCodePoint.canShrinkWithoutContext(value)).toBe(false);
  }
  expect(anyCodePoint.canShrinkWithoutContext('\u{1f600}')).toBe(true);
});

// The one place that builds fast-check's own unit, and with it the map this module spares the others (about 0.8 CPU-s):
// a fast-check that made its strings otherwise would fail here.
test("the same strings as fast-check's own unit, from the same seed, its dangerous strings among them", () => {
  const settings = { seed: 42, numRuns: 500 };
  const ours = fc.sample(anyText({ maxLength: 12 }), settings);
  expect(ours).toEqual(fc.sample(fc.string({ unit: 'binary', maxLength: 12 }), settings));
  expect(ours).toContain('prototype');
});
