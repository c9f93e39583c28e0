import { readFileSync } from 'node:fs';
import { expect, test } from 'vitest';
import { maxAgentsPerTenant } from '#functions/core/agents/agents.ts';
import { maxBodyBytes, maxBodyDepth } from '#functions/core/api/request-body.ts';
import { maxYamlTokens } from '#functions/core/api/yaml-body.ts';
import { maxTemplatesPerClient, maxVersionsPerTemplate } from '#functions/core/clients/quotas.ts';
import { type ErrorCode, errorCodes } from '#functions/core/error-codes.ts';
import { tenantLimits } from '#functions/core/templates/apply-check.ts';
import { requestSchemas } from '#schemas/index.ts';
import { endMarker } from '#tools/markdown.ts';
import {
  bundleSchema,
  bundleSection,
  generateTemplatesDoc,
  markerOf,
  sections,
  sharedSection,
  templatesFile,
} from '#tools/template-docs.ts';

const guide = () => readFileSync(templatesFile, 'utf8');

/** The rows of the table after `marker`, up to the end marker. */
const rowsAfter = (document: string, marker: string) => {
  const start = document.indexOf(marker);
  return document
    .slice(start, document.indexOf(endMarker, start))
    .split('\n')
    .filter((line) => line.startsWith('| `'));
};
const cellsOf = (line: string) => line.split(/(?<!\\)\|/).map((cell) => cell.trim());

test("docs/templates.md's field tables are generated from the current bundle schema (run `npm run generate` if not)", async () => {
  expect(guide()).toBe(await generateTemplatesDoc(guide()));
});

test('each object of the bundle schema has a table with a row per field, in order, and the shared definitions one', async () => {
  const document = await generateTemplatesDoc(guide());
  const defs = bundleSchema.$defs ?? {};
  const objects = Object.entries(defs).filter(([, node]) => node.type === 'object');
  expect(sections).toEqual([bundleSection, ...objects.map(([name]) => name), sharedSection]);
  for (const [section, object] of [[bundleSection, bundleSchema] as const, ...objects]) {
    const fields = rowsAfter(document, markerOf(section)).map((line) => cellsOf(line)[1]);
    expect(fields, section).toEqual(Object.keys(object.properties ?? {}).map((name) => `\`${name}\``));
  }
  const shared = rowsAfter(document, markerOf(sharedSection)).map((line) => cellsOf(line)[1]);
  expect(shared).toEqual(
    Object.entries(defs)
      .filter(([, node]) => node.type !== 'object')
      .map(([name]) => `\`${name}\``),
  );
});

test('a row states the type, whether required, and the limits of all the definitions a field refers to', async () => {
  const document = await generateTemplatesDoc(guide());
  /** The cells after the field's name. */
  const row = (section: string, field: string) =>
    cellsOf(rowsAfter(document, markerOf(section)).find((line) => line.startsWith(`| \`${field}\``)) ?? '').slice(2, -1);
  expect(row('flow', 'writes').slice(0, 3)).toEqual(['`tableKeys`', 'yes', 'as `tableKeys`; at least 1 item']);
  expect(row('flow', 'reads').slice(0, 3)).toEqual(['`tableKeys`', 'no (default `[]`)', 'as `tableKeys`']);
  expect(row(sharedSection, 'tableKeys').slice(0, 2)).toEqual(['array of `key`', 'at most 100 items; no repeats']);
  // Its own bound and the text schema's, together.
  expect(row('column', 'label')[2]).toMatch(/^at most 200 characters; must not contain control characters/);
  expect(row(sharedSection, 'name')[1]).toMatch(/^1 to 200 characters; must not contain control characters/);
  expect(row('connection', 'properties').slice(0, 3)).toEqual([
    'object (name to string, number or boolean)',
    'no',
    'at most 50 entries; names 1 to 64 characters; string values at most 4,096 characters',
  ]);
  expect(row(bundleSection, 'desks').slice(0, 3)).toEqual(['array of `desk`', 'no', 'at most 1,000 items']);
  // Markdown would read `'_' … '_'` as emphasis.
  expect(row('column', 'column_name')[3]).toContain("a letter or '\\_' then");
});

test('a document without a marker, or with one for a type the schema does not define, is refused, not written', async () => {
  await expect(generateTemplatesDoc(guide().replace(markerOf('widget'), ''))).rejects.toThrow(markerOf('widget'));
  const stale = `${guide()}\n${markerOf('report')}\n${endMarker}\n`;
  await expect(generateTemplatesDoc(stale)).rejects.toThrow('markers for report');
});

test("the guide's error tables name codes of the service, each with its status", () => {
  const rows = [...guide().matchAll(/^\| (\d{3}) +\| `(\w+)` +\|/gm)];
  expect(rows.length).toBeGreaterThan(10);
  for (const [, status, code] of rows) {
    expect(errorCodes[code as ErrorCode]?.status, code).toBe(Number(status));
  }
});

test("the guide's limits table states the limits the code keeps", () => {
  const limits = new Map(
    [...guide().matchAll(/^\| ([A-Z][^|]+?) +\| ([^|]+?) +\|/gm)].map(([, limit, value]) => [limit, value] as const),
  );
  const stated = (limit: string) => limits.get(limit) ?? `no row ${limit}`;
  const number = (value: number) => value.toLocaleString('en');
  expect(stated('Request body')).toContain(number(maxBodyBytes));
  expect(stated('YAML body')).toContain(number(maxYamlTokens));
  expect(stated('Nesting of a body')).toContain(String(maxBodyDepth));
  for (const list of Object.values(bundleSchema.properties ?? {}).filter((field) => field.type === 'array')) {
    expect(stated('Resources of one type in a bundle')).toBe(number(list.maxItems ?? 0));
  }
  expect(stated('Templates a client may have')).toBe(number(maxTemplatesPerClient));
  expect(stated('Versions a template may have')).toBe(number(maxVersionsPerTemplate));
  expect(stated('Agents a tenant may have')).toContain(number(maxAgentsPerTenant));
  expect(stated('Flows a tenant may have from its templates')).toBe(number(tenantLimits.flows));
  expect(stated('Tables a tenant may have from its templates')).toBe(number(tenantLimits.tables));
  expect(stated('Template resources a tenant may have')).toBe(number(tenantLimits.resources));
  expect(stated('Bytes of template resources a tenant may have')).toContain(number(tenantLimits.bytes));
  expect(stated('Items of one reload')).toBe(number(requestSchemas.reload.properties.items.maxItems));
});
