/**
 * Lists come back in sort-key order, so ids must sort as numbers (9 before 10), not as text: in
 * every sort key the declarations write (an item's, and each of its index entries'), each `sortable`
 * facet orders as its numbers do, the other facets held still.
 */
import { expect, test } from 'vitest';
import type { DeclaredEntity, Facet, KeyTemplate } from '#functions/core/store/entities.ts';
import { entities } from '#functions/core/store/entity-declarations.ts';

type AnyTemplate = KeyTemplate<never>;

/** A value of each facet kind, held still while another varies. */
function stillValue(facet: Facet<string, never>): unknown {
  if (facet.kind === 'decimal' || facet.kind === 'sortable') return 1;
  if (facet.kind === 'letter') return Object.keys(facet.letters ?? {})[0];
  return 'x';
}

const sortKeys = Object.values<DeclaredEntity>(entities).flatMap((entity) => {
  const { key, indexes = {}, legacyIndexes = {} } = entity.declaration;
  const templates: Array<[string, AnyTemplate]> = [
    [`${entity.name} key`, key.sk],
    ...Object.entries({ ...indexes }).map(([index, entry]): [string, AnyTemplate] => [`${entity.name} ${index}`, entry.sk]),
    ...Object.entries({ ...legacyIndexes }).map(([index, entry]): [string, AnyTemplate] => [
      `${entity.name} earlier ${index}`,
      entry.sk,
    ]),
  ];
  return templates.flatMap(([where, template]) =>
    template.facets
      .filter((facet) => facet.kind === 'sortable')
      .map((varying): [string, AnyTemplate, Facet<string, never>] => [`${where}, by ${varying.name}`, template, varying]),
  );
});

test('the declarations have sort keys with ids in them', () => {
  expect(sortKeys.length).toBeGreaterThan(20);
});

test.each(sortKeys)('%s orders numerically', (_where, template, varying) => {
  const ids = [0, 1, 9, 10, 99, 100, 12345, 999_999_999_999];
  const render = (id: number) =>
    template.render(
      Object.fromEntries(template.facets.map((facet) => [facet.name, facet === varying ? id : stillValue(facet)])) as never,
      'sort',
    );
  const sorted = [...ids].sort((a, b) => (render(a) < render(b) ? -1 : 1));
  expect(sorted).toEqual(ids);
});
