import type { APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2 } from 'aws-lambda';
import { packageFileText, staticFile, staticFileAnswer } from '#functions/core/api/static-file.ts';

/** The committed document (`npm run docs` writes it; a unit test keeps it equal to what the route table and the schemas give), as the route lists it in `packageFiles`. */
const openApiPackageFile = '#docs/openapi.json';

/**
 * GET /openapi.json: the document, minified, served as core/api/static-file.ts serves a file (gzipped when
 * accepted, with an ETag). The route ships it beside the code (`packageFiles`) rather than in it: at 640 KB
 * minified it alone was over the 500 KB bundle budget of bench/bundles.ts, and a cold start would parse it.
 */
export const handler = async (event: APIGatewayProxyEventV2): Promise<APIGatewayProxyStructuredResultV2> =>
  staticFileAnswer(
    event,
    () => staticFile('openapi.json', async () => JSON.stringify(JSON.parse(await packageFileText(openApiPackageFile)))),
    { 'content-type': 'application/json; charset=utf-8', 'cache-control': 'public, max-age=300' },
  );
