/**
 * Item kinds: which declared entity an item is, read from its key alone (entities.ts `entityOf`,
 * by each key template's `match`). Every key a declaration renders reads as that declaration, with
 * the facets it was rendered from; `match` agrees with a brute-force reader on near misses; and it
 * stays linear on long keys made to make a backtracking reader try every split.
 */
import fc from 'fast-check';
import { describe, expect, test } from 'vitest';
import {
  type DeclaredEntity,
  entity,
  entityOf,
  type Facet,
  type KeyAttribute,
  type KeyTemplate,
  keyTemplate,
  sortable,
  text,
} from '#functions/core/store/entities.ts';
import { declaredEntityOf, entities } from '#functions/core/store/entity-declarations.ts';
import { valuesOf } from '#test/support/facet-arbitraries.ts';
import { expectEqual, expectSame } from '#test/support/loop-expect.ts';

type AnyTemplate = KeyTemplate<never>;
type AnyFacet = Facet<string, never>;

const declared: readonly DeclaredEntity[] = Object.values(entities);

/** Every template of a declaration: its key's, and its index entries' (earlier ones included), with the attribute each writes. */
const templatesOf = ({
  name,
  declaration,
}: DeclaredEntity): Array<{ where: string; template: AnyTemplate; attribute: KeyAttribute }> => [
  { where: `${name} pk`, template: declaration.key.pk, attribute: 'partition' },
  { where: `${name} sk`, template: declaration.key.sk, attribute: 'sort' },
  ...[declaration.indexes, declaration.legacyIndexes].flatMap((indexes) =>
    Object.entries(indexes ?? {}).flatMap(([index, { pk, sk }]) => [
      { where: `${name} ${index}pk`, template: pk, attribute: 'partition' as const },
      { where: `${name} ${index}sk`, template: sk, attribute: 'sort' as const },
    ]),
  ),
];
const everyTemplate = declared.flatMap(templatesOf);

/** What `match` answered, put back together: the value it read, when it read the value right. */
const reassembled = (template: AnyTemplate, written: Readonly<Record<string, string>>) =>
  template.facets.reduce(
    (value, facet, index) => `${value}${written[facet.name]}${template.literals[index + 1]}`,
    template.literals[0],
  );

describe('every key a declaration renders reads as that declaration', () => {
  test.each(declared.map((each) => [each.name, each] as const))('%s', (_name, each) => {
    fc.assert(
      fc.property(valuesOf(each.facets), (values) => {
        const { pk, sk } = each.declaration.key;
        const key = { pk: pk.render(values as never, 'partition'), sk: sk.render(values as never, 'sort') };
        expectSame(declaredEntityOf(key)?.name, each.name, `${key.pk} / ${key.sk}`);
      }),
    );
  });

  test('each template reads back the facets it was rendered from, as written', () => {
    for (const { where, template, attribute } of everyTemplate) {
      fc.assert(
        fc.property(valuesOf(template.facets), (values) => {
          const rendered = template.render(values as never, attribute);
          const written = Object.fromEntries(
            template.facets.map((facet) => [facet.name, facet.write(values[facet.name] as never)]),
          );
          expectEqual(template.match(rendered), written, `${where}: ${rendered}`);
        }),
        { numRuns: 300 },
      );
    }
  });
});

/**
 * Every way `value` splits into the template's literals and facet values of their kind, by trying
 * every split (exponential: for short values only).
 */
function everySplit(template: AnyTemplate, value: string): string[][] {
  const { literals, facets } = template;
  const fits = (facet: AnyFacet, written: string) =>
    facet.kind === 'decimal'
      ? /^[0-9]+$/.test(written)
      : facet.kind === 'sortable'
        ? /^[0-9]{12,}$/.test(written)
        : facet.kind === 'letter'
          ? Object.values(facet.letters ?? {}).includes(written)
          : true;
  const from = (index: number, at: number): string[][] => {
    const literal = literals[index] as string;
    if (!value.startsWith(literal, at)) return [];
    const start = at + literal.length;
    const facet = facets[index];
    if (!facet) return start === value.length ? [[]] : [];
    return Array.from({ length: value.length - start + 1 }, (_, length) => value.slice(start, start + length))
      .filter((written) => fits(facet, written))
      .flatMap((written) => from(index + 1, start + written.length).map((rest) => [written, ...rest]));
  };
  return from(0, 0);
}

/** Values near a template's: its literals, the declarations' other literals, and pieces of facets, in any order. */
const pieces = [
  ...new Set(everyTemplate.flatMap(({ template }) => template.literals.filter((literal) => literal !== ''))),
  '#',
  't',
  'U',
  'G',
  'x',
  '7',
  '000000000042',
  '0000000000',
];
const nearMiss = (template: AnyTemplate) =>
  fc.oneof(
    fc.array(fc.constantFrom(...pieces), { maxLength: 8 }).map((parts) => parts.join('')),
    fc
      .tuple(fc.array(fc.constantFrom(...pieces, ...template.literals), { maxLength: 3 }), fc.array(fc.constantFrom(...pieces)))
      .map(
        ([inner, tail]) =>
          template.literals
            .map((literal, index) => `${literal}${index < template.facets.length ? inner.join('') : ''}`)
            .join('') + (tail.length % 2 === 0 ? '' : tail.join('')),
      ),
  );

test('match reads a value exactly when some split of it fits the template, and then one that does', () => {
  for (const { where, template } of everyTemplate) {
    fc.assert(
      fc.property(nearMiss(template), (value) => {
        const splits = everySplit(template, value);
        const written = template.match(value);
        expectSame(written !== undefined, splits.length > 0, `${where}: ${value}`);
        if (written) {
          expect(splits.map((split) => split.join('\u0000'))).toContain(
            template.facets.map((facet) => written[facet.name]).join('\u0000'),
          );
          expectSame(reassembled(template, written), value);
        }
      }),
      { numRuns: 300 },
    );
  }
});

describe('entityOf', () => {
  const probe = (name: string, sk: AnyTemplate) => entity({ name, key: { pk: keyTemplate`PROBE`, sk } });
  const any = probe('any', keyTemplate`${text('rest')}`);
  const numbered = probe('numbered', keyTemplate`N#${sortable('id')}`);

  test('answers the one entity whose templates read the key, and undefined when none does', () => {
    expect(entityOf({ pk: 'PROBE', sk: 'N#7' }, [numbered])).toBeUndefined();
    expect(entityOf({ pk: 'PROBE', sk: 'N#000000000007' }, [numbered])).toBe(numbered);
    expect(entityOf({ pk: 'OTHER', sk: 'N#000000000007' }, [numbered])).toBeUndefined();
    expect(declaredEntityOf({ pk: 'TENANT#7', sk: 'NO SUCH ITEM' })).toBeUndefined();
    expect(declaredEntityOf({ pk: 'TENANT#7', sk: 'USER#7' })).toBeUndefined();
    expect(declaredEntityOf({ pk: 'TENANT#7', sk: 'USER#000000000007' })?.name).toBe('user');
  });

  test('throws when two declarations read one key: they would share items', () => {
    expect(() => entityOf({ pk: 'PROBE', sk: 'N#000000000007' }, [any, numbered])).toThrow(
      'The item PROBE / N#000000000007 reads as any and numbered',
    );
  });

  test('a template with two facets side by side cannot be read', () => {
    expect(() => keyTemplate`A#${text('one')}${text('two')}`.match('A#xy')).toThrow('two facets with nothing between them');
  });
});

describe('match is linear in the key, whatever its text', () => {
  // Each facet holds runs of the literal that follows it (or precedes it, for the last) and 11-digit
  // runs, one short of a sortable id: a reader that tries each split in turn tries every one of those
  // literals and reads the rest of the key from each. Such a reader took 1.2 s on a follow-up's sort
  // key of 20,000 characters (growing with the square of the length), `match` 0.04 ms. Tests assert
  // no times: at this size, this is the class's example, not a measurement.
  const length = 200_000;
  const adversarial = (template: AnyTemplate, fillerOf: (index: number) => string) =>
    template.literals.reduce(
      (value, literal, index) =>
        `${value}${literal}${index < template.facets.length ? fillerOf(index).repeat(Math.ceil(length / fillerOf(index).length)) : ''}`,
      '',
    );
  const around = (template: AnyTemplate, index: number) =>
    `${template.literals[index + 1] || template.literals[index] || '#'}00000000000`;

  test('every template, on keys of 200,000 characters and more made to backtrack', () => {
    for (const { where, template } of everyTemplate) {
      if (template.facets.length === 0) continue;
      for (const value of [
        adversarial(template, (index) => around(template, index)),
        `${adversarial(template, (index) => around(template, index))}x`,
        adversarial(template, () => '#t'),
      ]) {
        const written = template.match(value);
        if (written) expect(reassembled(template, written), where).toBe(value);
      }
    }
  });

  test('entityOf over every declaration, on such keys', () => {
    for (const each of declared) {
      const { pk, sk } = each.declaration.key;
      const key = {
        pk: adversarial(pk, (index) => around(pk, index)),
        sk: adversarial(sk, (index) => around(sk, index)),
      };
      const found = declaredEntityOf(key);
      if (found) expect(found.declaration.key.sk.match(key.sk)).toBeDefined();
    }
  });
});
