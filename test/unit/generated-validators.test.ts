import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect, test } from 'vitest';
import { generateValidatorModules, validatorsDirectory } from '../../bin/generate-validators.ts';

test('the committed validators are generated from the current schemas (run `npm run generate` if not)', () => {
  const generated = generateValidatorModules();
  expect(readdirSync(validatorsDirectory).sort()).toEqual(Object.keys(generated).sort());
  for (const [file, content] of Object.entries(generated)) {
    expect(readFileSync(join(validatorsDirectory, file), 'utf8'), file).toBe(content);
  }
});
