/**
 * The entity declarations (functions/core/store/entity-declarations.ts) hold together: each is
 * named as declared; the entities a rule names are declared; and the prefix rule: in one key space
 * no entity's constant sort key prefix starts with another's among the templates of one partition
 * shape, so a `begins_with` Query of one entity never reads another's items. (That they build what
 * the key builders they replaced built is test/unit/golden-keys-frozen.test.ts.)
 */
import fc from 'fast-check';
import { expect, test } from 'vitest';
import type { DeclaredEntity, KeyTemplate } from '#functions/core/store/entities.ts';
import { agent, collections, datamart, entities } from '#functions/core/store/entity-declarations.ts';
import { tableDefinition } from '#functions/core/store/table-definition.ts';
import { arbitraryOf } from '#test/support/facet-arbitraries.ts';
import { expectEqual, expectSame } from '#test/support/loop-expect.ts';

const declaredEntities: readonly DeclaredEntity[] = Object.values(entities);

test('every declaration is named as declared', () => {
  for (const [name, entity] of Object.entries({ ...entities, ...collections })) expect(entity.name).toBe(name);
});

test("the entities a declaration names (claims, counts, sweeps, index writers) are declared; a claim's key holds its attribute", () => {
  const declared = new Set(declaredEntities);
  for (const { name, declaration } of declaredEntities) {
    const named = [
      ...(declaration.unique ?? []).map(({ claim }) => claim),
      ...(declaration.count ? ['item' in declaration.count ? declaration.count.item : declaration.count.parent()] : []),
      ...(declaration.sweep?.leaves ?? []),
      ...Object.values(declaration.indexes ?? {}).flatMap(({ writtenBy }) => (writtenBy ? [writtenBy] : [])),
    ];
    expect(
      named.filter((entity) => !declared.has(entity)).map((entity) => entity.name),
      name,
    ).toEqual([]);
    for (const { attribute, claim } of declaration.unique ?? []) {
      expect(
        claim.facets.map((facet) => facet.name),
        `${name}.${attribute}`,
      ).toContain(attribute);
    }
  }
});

/**
 * The prefix rule. Within one key space (the table, or one index), key templates are grouped by
 * their partition template's shape: its literal text with each facet as `{}` (`TENANT#{}`), so
 * templates that could name the same partition fall in one group. In a group, for any two
 * different owners (an entity's key or index entry, or a collection), neither's sort key constant
 * prefix (its literal text before the first facet; all of it when it has none) starts with the
 * other's. Every sort key an owner writes and every prefix it queries with (`keyPrefix`, from no
 * facet on) starts with its constant prefix, so two constant prefixes that differ within the
 * shorter's length mean no Query of one owner's prefix can read the other's items. A collection's
 * members are not held to the rule against the collection (reading them together is its point).
 * Templates of different shapes are taken to name different partitions.
 */
interface Placement {
  owner: string;
  pk: KeyTemplate<never>;
  skPrefix: string;
  members?: readonly string[];
}

function prefixOverlaps(placements: readonly Placement[]): string[] {
  return placements.flatMap((one, index) =>
    placements
      .slice(index + 1)
      .filter(
        (other) =>
          other.pk.shape === one.pk.shape &&
          !one.members?.includes(other.owner) &&
          !other.members?.includes(one.owner) &&
          (one.skPrefix.startsWith(other.skPrefix) || other.skPrefix.startsWith(one.skPrefix)),
      )
      .map((other) => `${one.owner} (${one.skPrefix}) and ${other.owner} (${other.skPrefix}) in ${one.pk.shape}`),
  );
}

function placements(): Map<string, Placement[]> {
  const spaces = new Map<string, Placement[]>([['table', []]]);
  const place = (space: string, placement: Placement) => spaces.set(space, [...(spaces.get(space) ?? []), placement]);
  for (const { name, declaration } of declaredEntities) {
    place('table', { owner: name, pk: declaration.key.pk, skPrefix: declaration.key.sk.constantPrefix });
    for (const [indexes, label] of [
      [declaration.indexes, ''],
      [declaration.legacyIndexes, ' (legacy)'],
    ] as const) {
      for (const [index, { pk, sk }] of Object.entries(indexes ?? {})) {
        place(index, { owner: `${name}${label}`, pk, skPrefix: sk.constantPrefix });
      }
    }
  }
  for (const { name, members, pk, keyPrefix } of Object.values(collections)) {
    place('table', { owner: name, pk, skPrefix: keyPrefix, members: members.map((member) => member.name) });
  }
  return spaces;
}

test("no declared sort key prefix is a prefix of another entity's in the same partition", () => {
  const spaces = placements();
  expect([...spaces.keys()]).toEqual(['table', ...tableDefinition.globalIndexes.map(({ indexName }) => indexName)]);
  for (const [space, placed] of spaces) expect(prefixOverlaps(placed), space).toEqual([]);
});

/** What a template can render: its literal text, and for each facet what the facet's kind can write. */
function patternOf(template: KeyTemplate<never>): RegExp {
  const escape = (literal: string) => literal.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  const written = template.facets.map((facet) => {
    if (facet.kind === 'decimal') return '\\d+';
    if (facet.kind === 'sortable') return '\\d{12,}';
    if (facet.kind === 'letter')
      return `(?:${Object.values(facet.letters ?? {})
        .map(escape)
        .join('|')})`;
    return '[\\s\\S]*';
  });
  const literals = template.shape.split('{}');
  return new RegExp(`^${literals.map((literal, index) => `${escape(literal)}${written[index] ?? ''}`).join('')}$`);
}

/** The partition keys a template renders from random facets. */
const partitionsOf = (template: KeyTemplate<never>) =>
  fc
    .record(Object.fromEntries(template.facets.map((facet) => [facet.name, arbitraryOf(facet)])))
    .map((values) => template.render(values as never, 'partition'));

test('partition templates of different shapes never name the same partition (what the prefix rule takes as given)', () => {
  for (const [space, placed] of placements()) {
    const templates = [...new Map(placed.map(({ pk }) => [pk.shape, pk])).values()];
    const rendered = fc.oneof(...templates.map((pk) => partitionsOf(pk).map((partition) => ({ pk, partition }))));
    fc.assert(
      fc.property(rendered, ({ pk, partition }) => {
        expectSame(patternOf(pk).test(partition), true, `${partition} as ${pk.shape}`);
        const alsoMatching = templates.filter((other) => other !== pk && patternOf(other).test(partition));
        expectEqual(
          alsoMatching.map(({ shape }) => shape),
          [],
          `${space}: ${partition} (${pk.shape})`,
        );
      }),
      { numRuns: 2000 },
    );
  }
});

test('the prefix rule names two owners whose prefixes overlap in one partition, and no others', () => {
  const tenantPartition = agent.declaration.key.pk;
  const datamartPartition = datamart.declaration.key.pk;
  expect(
    prefixOverlaps([
      { owner: 'agent', pk: tenantPartition, skPrefix: 'AGENT#' },
      { owner: 'agentName', pk: tenantPartition, skPrefix: 'AGENT#NAME#' },
    ]),
  ).toEqual(['agent (AGENT#) and agentName (AGENT#NAME#) in TENANT#{}']);
  // In another partition, or read with it as a collection's member: no overlap.
  expect(
    prefixOverlaps([
      { owner: 'agent', pk: tenantPartition, skPrefix: 'AGENT#' },
      { owner: 'other', pk: datamartPartition, skPrefix: 'AGENT#' },
      { owner: 'agents', pk: tenantPartition, skPrefix: 'AG', members: ['agent'] },
    ]),
  ).toEqual([]);
});
