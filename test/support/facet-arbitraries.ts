/**
 * Random values for the facets of the entity declarations (functions/core/store/entity-declarations.ts):
 * ids of any size (padding stops at 12 digits, ids do not), hashes, ISO instants, and any Unicode
 * text, with changes no reader sees where a facet folds it.
 */
import fc from 'fast-check';
import type { Facet } from '#functions/core/store/entities.ts';
import { resourceTypes } from '#functions/core/templates/tenant-resources.ts';
import { anyText } from './any-text.ts';
import { unseen } from './unseen.ts';

const ids = fc.maxSafeNat();
const sha256 = fc.stringMatching(/^[0-9a-f]{64}$/);
const instants = fc
  .date({ min: new Date('2000-01-01T00:00:00Z'), max: new Date('2200-01-01T00:00:00Z'), noInvalidDate: true })
  .map((date) => date.toISOString());
const anyString = anyText();
const readerText = fc.oneof(
  anyString,
  fc
    .tuple(fc.string(), fc.array(unseen, { maxLength: 3 }))
    .map(([word, changes]) => changes.reduce((text, change) => change(text), word)),
);
/** Text facets whose values have a shape of their own. */
const shapedText: Record<string, fc.Arbitrary<string>> = {
  tokenHash: sha256,
  sessionHash: sha256,
  keyHash: sha256,
  nextFireAt: instants,
  // A schedule run's slot (a webhook slot is a number).
  slot: instants,
  // A resource's type is one of these, never empty.
  type: fc.constantFrom(...resourceTypes),
};

export function arbitraryOf(facet: Facet<string, never>): fc.Arbitrary<unknown> {
  switch (facet.kind) {
    case 'decimal':
    case 'sortable':
      return ids;
    case 'letter':
      return fc.constantFrom(...Object.keys(facet.letters ?? {}));
    case 'folded':
    case 'name-key':
      return readerText;
    case 'text':
      return shapedText[facet.name] ?? anyString;
  }
}

/** Random values for every one of `facets`, by name. */
export const valuesOf = (facets: readonly Facet<string, never>[]) =>
  fc.record(Object.fromEntries(facets.map((facet) => [facet.name, arbitraryOf(facet)]))) as fc.Arbitrary<Record<string, unknown>>;
