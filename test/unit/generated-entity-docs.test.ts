import { readFileSync } from 'node:fs';
import { expect, test } from 'vitest';
import type { DeclaredEntity } from '#functions/core/store/entities.ts';
import { entities } from '#functions/core/store/entity-declarations.ts';
import { architectureFile, blockMarkers, generateArchitectureDoc } from '#tools/entity-docs.ts';
import { endMarker } from '#tools/markdown.ts';

const architecture = () => readFileSync(architectureFile, 'utf8');

test("docs/architecture.md's data model and rules are generated from the current declarations (run `npm run generate` if not)", async () => {
  expect(architecture()).toBe(await generateArchitectureDoc(architecture()));
});

test('the data model has a row for every declared entity, and the rules one for each claim, count and sweep', async () => {
  const document = await generateArchitectureDoc(architecture());
  const rowsOf = (marker: string) =>
    document
      .slice(document.indexOf(marker), document.indexOf(endMarker, document.indexOf(marker)))
      .split('\n')
      .filter((line) => line.startsWith('| `'));
  const declared: readonly DeclaredEntity[] = Object.values(entities);
  const dataModel = rowsOf(blockMarkers.dataModel);
  expect(dataModel.map((line) => line.slice(3, line.indexOf('`', 3)))).toEqual(declared.map(({ name }) => name));
  expect(dataModel).toContainEqual(
    expect.stringContaining(
      '`TENANT#<tenantId>#OWNERS` / `<userId:12>` (once the user has owned a datamart; written by `datamart`)',
    ),
  );
  expect(dataModel).toContainEqual(
    expect.stringContaining("`datamartTable`: a table of a datamart (legacy: replaced by the datamart record's table list)"),
  );
  const rules = rowsOf(blockMarkers.rules);
  const stated = declared.flatMap(({ declaration }) => [
    ...(declaration.unique ?? []),
    ...(declaration.count ? [declaration.count] : []),
    ...(declaration.sweep ? [declaration.sweep] : []),
  ]);
  expect(rules).toHaveLength(stated.length);
  expect(rules).toContainEqual(expect.stringContaining('the `userLogin` claim `LOGIN#<login:folded>`'));
  expect(rules).toContainEqual(expect.stringContaining('the count `COUNT#USERS` in `TENANT#<tenantId>` (`tenantCount`)'));
  expect(rules).toContainEqual(
    expect.stringContaining('`user` deletions leave no `membership`, `permission` or `datamartOwner` behind'),
  );
});

test('a document without its markers is refused, not written', async () => {
  await expect(generateArchitectureDoc(architecture().replace(blockMarkers.rules, ''))).rejects.toThrow(blockMarkers.rules);
});
