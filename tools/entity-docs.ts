/**
 * The parts of docs/architecture.md that the entity declarations (functions/core/store/
 * entity-declarations.ts) say, made from them: the data model's table of items (keys, index entries
 * with their sparse rule, legacy items marked) and the rules that keep them (each unique claim, each
 * count, each sweep). Each goes between its marker comments, formatted as prettier formats the file.
 * `npm run generate` writes them; test/unit/generated-entity-docs.test.ts fails when they are stale.
 */
import { fileURLToPath } from 'node:url';
import { format, resolveConfig } from 'prettier';
import type { DeclaredEntity, Facet, KeyTemplate, UniqueClaim } from '#functions/core/store/entities.ts';
import { entities } from '#functions/core/store/entity-declarations.ts';
import { tableDefinition } from '#functions/core/store/table-definition.ts';
import { code, listed, replaceBlock, table } from './markdown.ts';

export const architectureFile = fileURLToPath(new URL('../docs/architecture.md', import.meta.url));

/** The marker after which each generated block goes, up to the next `endMarker`. */
export const blockMarkers = {
  dataModel: '<!-- generated: entities (npm run generate) -->',
  rules: '<!-- generated: entity rules (npm run generate) -->',
} as const;

type AnyTemplate = KeyTemplate<never>;

const declared: readonly DeclaredEntity[] = Object.values(entities);

/** How the table writes a facet: its name, and how its kind writes the value when that is not as it is. */
function facetText(facet: Facet<string, never>): string {
  const how = {
    decimal: '',
    text: '',
    sortable: ':12',
    folded: ':folded',
    'name-key': ':name key',
    letter: `:${Object.values(facet.letters ?? {}).join('/')}`,
  }[facet.kind];
  return `<${facet.name}${how}>`;
}

/** A template as the table writes it, with the facets `given` written as their values. */
const templateText = (template: AnyTemplate, given: Readonly<Record<string, string>> = {}) =>
  code(
    template.literals
      .map((literal, index) => {
        const facet = template.facets[index];
        return `${literal}${facet ? (given[facet.name] ?? facetText(facet)) : ''}`;
      })
      .join(''),
  );

/** The index column of an entity: its entry in `index` (with its sparse rule and writer), and an earlier version's. */
function indexCell({ declaration }: DeclaredEntity, index: string): string {
  const current = declaration.indexes?.[index as keyof typeof declaration.indexes];
  const earlier = declaration.legacyIndexes?.[index as keyof typeof declaration.legacyIndexes];
  const notes = (entry: NonNullable<typeof current>) =>
    [entry.sparse, entry.writtenBy && `written by ${code(entry.writtenBy.name)}`].filter(Boolean).join('; ');
  return [
    current && `${templateText(current.pk)} / ${templateText(current.sk)}${notes(current) ? ` (${notes(current)})` : ''}`,
    earlier && `earlier version: ${templateText(earlier.pk)} / ${templateText(earlier.sk)}`,
  ]
    .filter(Boolean)
    .join('; ');
}

function dataModelTable(): string {
  const indexes = tableDefinition.globalIndexes;
  return table(
    [
      'Item',
      tableDefinition.partitionKey,
      tableDefinition.sortKey,
      ...indexes.map((index) => `${index.partitionKey} / ${index.sortKey}`),
    ],
    declared.map((entity) => {
      const { description, legacy, key } = entity.declaration;
      const item = [code(entity.name), description && `: ${description}`, legacy && ` (legacy: replaced by ${legacy})`];
      return [
        item.filter(Boolean).join(''),
        templateText(key.pk),
        templateText(key.sk),
        ...indexes.map(({ indexName }) => indexCell(entity, indexName)),
      ];
    }),
  );
}

/** How a claim compares its attribute: as the facet that writes it into the claim's key. */
function comparedAs(claim: DeclaredEntity, attribute: string): string {
  const facet = claim.facets.find(({ name }) => name === attribute);
  if (facet?.kind === 'folded') return 'as a reader sees it (names.ts `foldedText`)';
  if (facet?.kind === 'name-key') return 'as names compare (names.ts `nameKey`)';
  return 'exactly as written';
}

function claimRow(
  holder: DeclaredEntity,
  { attribute, claim, holder: holderAttribute, takeover, release }: UniqueClaim,
): string[] {
  const owner = code(holder.name);
  const takeoverText = {
    never: 'a claim found refuses the write',
    'when-holder-gone':
      'one left by a holder that no longer exists is taken over, conditional on it still naming that holder and the holder still absent',
  }[takeover];
  const releaseText = {
    never: `never released (${owner} items are neither deleted nor renamed)`,
    'with-holder': `deleted in the ${owner}'s deletion, moved in its rename`,
    'while-held': `deleted in the ${owner}'s deletion, moved in its rename, only while it names the ${owner}`,
  }[release];
  const { pk, sk } = claim.declaration.key;
  return [
    `${code(attribute)} is unique among ${owner} items in ${templateText(pk)}, ${comparedAs(claim, attribute)}`,
    `the ${code(claim.name)} claim ${templateText(sk)} (its ${code(holderAttribute)} names the holder), put with ` +
      `\`attribute_not_exists\` in the ${owner}'s transaction; ${takeoverText}; ${releaseText}`,
  ];
}

function countRow(counted: DeclaredEntity): string[] {
  const rule = counted.declaration.count;
  if (!rule) return [];
  const what = code(counted.name);
  if (rule.kind === 'parent-attribute') {
    const parent = rule.parent();
    return [
      `${what} items are counted per ${code(parent.name)}, up to a maximum`,
      `${code(rule.attribute)} on the ${code(parent.name)} item, advanced with a condition on its maximum`,
    ];
  }
  const { pk, sk } = rule.item.declaration.key;
  const name: Record<string, string> = rule.kind === 'quota-count' ? { name: rule.name } : {};
  const kept =
    rule.kind === 'quota-count'
      ? "changed and conditioned in each creation's and deletion's transaction (store/counts.ts)"
      : "started and conditioned in each creation's transaction";
  return [
    `${what} items are counted, up to a maximum`,
    `the count ${templateText(sk, name)} in ${templateText(pk)} (${code(rule.item.name)}), ${kept}`,
  ];
}

function sweepRow(deleted: DeclaredEntity): string[] {
  const sweep = deleted.declaration.sweep;
  if (!sweep) return [];
  return [
    `${code(deleted.name)} deletions leave no ${listed(sweep.leaves.map(({ name }) => code(name)))} behind`,
    `the ${code(sweep.followUp)} follow-up, written in the deleting transaction, sweeps them`,
  ];
}

function rulesTable(): string {
  const rows = [
    ...declared.flatMap((entity) => (entity.declaration.unique ?? []).map((claim) => claimRow(entity, claim))),
    ...declared.map(countRow),
    ...declared.map(sweepRow),
  ].filter((cells) => cells.length > 0);
  return table(['Rule the declarations state', 'Kept by'], rows);
}

/** `document` (docs/architecture.md as it is) with its generated blocks made afresh, as prettier writes them. */
export async function generateArchitectureDoc(document: string): Promise<string> {
  const options = { ...(await resolveConfig(architectureFile)), filepath: architectureFile };
  let generated = document;
  for (const [marker, block] of [
    [blockMarkers.dataModel, dataModelTable()],
    [blockMarkers.rules, rulesTable()],
  ] as const) {
    generated = replaceBlock(generated, marker, await format(block, options), architectureFile);
  }
  return generated;
}
