/**
 * `npm run docs`: writes docs/openapi.json, the OpenAPI 3.1 description of the API, from the route
 * table and the JSON Schemas (tools/openapi/ builds it). The output is committed and served by
 * GET /openapi.json; test/unit/openapi.test.ts fails when it is stale.
 */
import { writeFileSync } from 'node:fs';
import { generateOpenApiJson, openApiFile } from '#tools/openapi/openapi-json.ts';

writeFileSync(openApiFile, generateOpenApiJson());
console.log(`wrote ${openApiFile}`);
