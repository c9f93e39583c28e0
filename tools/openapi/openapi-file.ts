import { fileURLToPath } from 'node:url';

/**
 * Where docs/openapi.json is. A module of its own: what only reads the committed document (the tests' contract
 * check, imported by every file that calls the API) does not load the generator of openapi-json.ts.
 */
export const openApiFile = fileURLToPath(new URL('../../docs/openapi.json', import.meta.url));
