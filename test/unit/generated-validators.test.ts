import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect, test } from 'vitest';
import { generateValidatorModules, validatorsDirectory } from '#bin/generate-validators.ts';

test('the committed validators and body types are generated from the current schemas (run `npm run generate` if not)', async () => {
  const generated = await generateValidatorModules();
  expect(readdirSync(validatorsDirectory).sort()).toEqual(Object.keys(generated).sort());
  for (const [file, content] of Object.entries(generated)) {
    expect(readFileSync(join(validatorsDirectory, file), 'utf8'), file).toBe(content);
  }
});
