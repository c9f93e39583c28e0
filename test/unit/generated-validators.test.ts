import { readFileSync } from 'node:fs';
import { expect, test } from 'vitest';
import { generateValidatorsCode, validatorsFile } from '../../bin/generate-validators.ts';

test('the committed validators are generated from the current schemas (run `npm run generate` if not)', () => {
  expect(readFileSync(validatorsFile, 'utf8')).toBe(generateValidatorsCode());
});
