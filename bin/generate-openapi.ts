/**
 * `npm run docs`: writes docs/openapi.json, the OpenAPI 3.1 description of the API, from the route
 * table and the JSON Schemas (tools/openapi/ builds it), then the typed client's types from it
 * (client/src/schema.ts). Both are committed (GET /openapi.json serves the first);
 * test/infra/generated-files.test.ts fails when they are stale.
 */
import { writeFileSync } from 'node:fs';
import { clientTypesFile, generateClientTypes } from '#tools/client-types.ts';
import { openApiFile } from '#tools/openapi/openapi-file.ts';
import { generateOpenApiJson } from '#tools/openapi/openapi-json.ts';

writeFileSync(openApiFile, generateOpenApiJson());
console.log(`wrote ${openApiFile}`);
writeFileSync(clientTypesFile, await generateClientTypes());
console.log(`wrote ${clientTypesFile}`);
