/**
 * What must be unique (logins, template names) is compared as a reader sees it. The class behind
 * the findings (`straße` beside `strasse`, `ａｎａ` beside `ana`, `Re\u200dtail` beside `Retail`): any
 * change a reader cannot see must not make a second name.
 */
import fc from 'fast-check';
import { expect, test } from 'vitest';
import { foldedText, nameKey } from '#functions/core/names.ts';
import { unseen } from '#test/support/unseen.ts';

test('a login or a name changed in ways no reader can see has the same key', () => {
  const words = fc.stringMatching(/^[a-z0-9]{1,6}(?:ss|fi|s)?[a-z0-9éç]{0,6}$/);
  fc.assert(
    fc.property(words, fc.array(unseen, { minLength: 1, maxLength: 4 }), (word, changes) => {
      const changed = changes.reduce((text, change) => change(text), word);
      expect(foldedText(changed)).toBe(foldedText(word));
      expect(nameKey(changed)).toBe(nameKey(word));
    }),
    { seed: 31, numRuns: 500 },
  );
});

test('the pairs a reviewer created twice fold together', () => {
  for (const [a, b] of [
    ['ana', 'ａｎａ'],
    ['strasse', 'straße'],
    ['οδος', 'οδοσ'],
    ['ΟΔΟΣ x', 'οδοσ x'],
    ['sam', 'ſam'],
    ['file', 'ﬁle'],
    ['ian', 'ıan'],
    ['admin', 'ad\u200dmin'],
    ['admin', 'admin\ufe0f'],
    ['x', 'x\u2800'],
    ['joe', '\u115fjoe'],
    ['Retail', '\u3164Retail'],
    ['Retail', 'Re\u034ftail'],
  ] as const) {
    expect(foldedText(b), `${a} / ${JSON.stringify(b)}`).toBe(foldedText(a));
  }
});

test('what a reader can tell apart stays apart', () => {
  for (const [a, b] of [
    ['ana', 'anna'],
    ['résumé', 'resume'],
    ['a b', 'ab'],
    ['ana1', 'ana2'],
    ['😀', '😃'],
  ] as const) {
    expect(nameKey(a)).not.toBe(nameKey(b));
  }
});
