/** `npm run generate` (after the validators, the route facts and the entity docs): writes docs/templates.md's field tables (see tools/template-docs.ts). */
import { readFileSync, writeFileSync } from 'node:fs';
import { generateTemplatesDoc, templatesFile } from '#tools/template-docs.ts';

writeFileSync(templatesFile, await generateTemplatesDoc(readFileSync(templatesFile, 'utf8')));
console.log(`wrote ${templatesFile}`);
