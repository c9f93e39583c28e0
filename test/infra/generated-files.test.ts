/**
 * The committed files generated from the route table and the schemas are what they give now: the
 * OpenAPI document, the typed client and the request validators. Generating them takes seconds (every
 * handler bundled for its error codes, the client's types formatted), so these run in the full suite,
 * not the unit loop.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect, test } from 'vitest';
import { generateValidatorModules, validatorsDirectory } from '#bin/generate-validators.ts';
import { clientTypesFile, generateClientTypes } from '#tools/client-types.ts';
import { openApiFile } from '#tools/openapi/openapi-file.ts';
import { generateOpenApiJson } from '#tools/openapi/openapi-json.ts';

test('docs/openapi.json is what the route table and the schemas give (run `npm run docs` if not)', () => {
  expect(readFileSync(openApiFile, 'utf8')).toBe(generateOpenApiJson());
});

test('the typed client is generated from the current docs/openapi.json (run `npm run docs` if not)', async () => {
  expect(readFileSync(clientTypesFile, 'utf8')).toBe(await generateClientTypes());
});

test('the committed validators and body types are generated from the current schemas (run `npm run generate` if not)', async () => {
  const generated = await generateValidatorModules();
  expect(readdirSync(validatorsDirectory).sort()).toEqual(Object.keys(generated).sort());
  for (const [file, content] of Object.entries(generated)) {
    expect(readFileSync(join(validatorsDirectory, file), 'utf8'), file).toBe(content);
  }
});
