/**
 * docs/openapi.json as committed: what `npm run docs` writes and test/unit/openapi.test.ts
 * compares with the file, so a route or schema change without `npm run docs` fails the tests.
 */
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { type Route, routes } from '../../functions/routes.ts';
import datamart from '../../schemas/responses/datamart.schema.json' with { type: 'json' };
import groupPermission from '../../schemas/responses/group-permission.schema.json' with { type: 'json' };
import userPermission from '../../schemas/responses/user-permission.schema.json' with { type: 'json' };
import { requestSchemas } from '../../schemas/index.ts';
import { openApiDocument } from './document.ts';
import { examples } from './examples.ts';

export const openApiFile = fileURLToPath(new URL('../../docs/openapi.json', import.meta.url));

const packageVersion = () =>
  (JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string }).version;

/** The document as committed: 2-space JSON, keys in the order the builder writes them, a final newline. */
export function generateOpenApiJson(describedRoutes: readonly Route[] = routes): string {
  const document = openApiDocument({
    routes: describedRoutes,
    requestSchemas,
    responseSchemas: { datamart, 'group-permission': groupPermission, 'user-permission': userPermission },
    examples,
    version: packageVersion(),
  });
  return `${JSON.stringify(document, null, 2)}\n`;
}
