/**
 * docs/openapi.json as committed: what `npm run docs` writes and test/infra/generated-files.test.ts
 * compares with the file, so a route or schema change without `npm run docs` fails the tests.
 */
import { readFileSync } from 'node:fs';
import { routes } from '#functions/routes.ts';
import { requestSchemas } from '#schemas/index.ts';
import { responseSchemas } from '#schemas/responses/index.ts';
import { openApiDocument } from './document.ts';
import { routeErrorCodes } from './error-codes.ts';
import { clientEventExamples, examples } from './examples.ts';

const packageVersion = () =>
  (JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string }).version;

/** The document as committed: 2-space JSON, keys in the order the builder writes them, a final newline. */
export function generateOpenApiJson(): string {
  const document = openApiDocument({
    routes,
    requestSchemas,
    responseSchemas,
    examples,
    eventExamples: clientEventExamples,
    errorCodes: routeErrorCodes(routes),
    version: packageVersion(),
  });
  return `${JSON.stringify(document, null, 2)}\n`;
}
