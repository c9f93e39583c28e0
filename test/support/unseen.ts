/**
 * Changes to a text that no reader can see (invisible marks, case, full-width forms, canonical and
 * compatibility forms), for the tests that check what must be unique is compared as a reader sees
 * it: the keys (test/unit/names.test.ts) and every route that stores such a name
 * (test/e2e/unique-names.test.ts).
 */
import fc from 'fast-check';

export const invisibles = [
  '\u200b',
  '\u200c',
  '\u200d',
  '\u2060',
  '\ufeff',
  '\u00ad',
  '\u034f',
  '\ufe0f',
  '\ufe00',
  '\u3164',
  '\u115f',
  '\u1160',
  '\uffa0',
  '\u2800',
  '\u180e',
];

/** A change a reader cannot see, applied to `text`. */
export const unseen = fc.oneof(
  fc.tuple(fc.nat(), fc.constantFrom(...invisibles)).map(([at, mark]) => (text: string) => {
    const index = at % (text.length + 1);
    return `${text.slice(0, index)}${mark}${text.slice(index)}`;
  }),
  fc.constant((text: string) => text.toUpperCase()),
  fc.constant((text: string) => text.toLowerCase()),
  // Full-width forms of ASCII letters and digits.
  fc.constant((text: string) =>
    text.replace(/[A-Za-z0-9]/g, (character) => String.fromCodePoint(character.charCodeAt(0) + 0xfee0)),
  ),
  fc.constant((text: string) => text.normalize('NFD')),
  fc.constant((text: string) => text.replaceAll('s', 'ſ')),
  fc.constant((text: string) => text.replaceAll('ss', 'ß')),
  fc.constant((text: string) => text.replaceAll('fi', 'ﬁ')),
);
