import { readFileSync } from 'node:fs';
import { expect, test } from 'vitest';
import { clientTypesFile, generateClientTypes } from '#tools/client-types.ts';

test('the typed client is generated from the current docs/openapi.json (run `npm run docs` if not)', async () => {
  expect(readFileSync(clientTypesFile, 'utf8')).toBe(await generateClientTypes());
});
