/** `npm run generate` (with the validators and the route facts): writes docs/architecture.md's generated blocks (see tools/entity-docs.ts). */
import { readFileSync, writeFileSync } from 'node:fs';
import { architectureFile, generateArchitectureDoc } from '#tools/entity-docs.ts';

writeFileSync(architectureFile, await generateArchitectureDoc(readFileSync(architectureFile, 'utf8')));
console.log(`wrote ${architectureFile}`);
