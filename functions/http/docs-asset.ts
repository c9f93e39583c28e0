import type { APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2 } from 'aws-lambda';
import { requestIdOf } from '#functions/core/api/request-id.ts';
import { packageFileText, staticErrorAnswer, staticFile, staticFileAnswer } from '#functions/core/api/static-file.ts';
import { errorBody } from '#functions/core/errors.ts';

/**
 * The files this route serves, by name, with their content types: Swagger UI's script and styles,
 * and our start-up script (the API description lists these names as `{asset}`'s only values).
 */
export const docsAssets = {
  'swagger-ui-bundle.js': 'text/javascript; charset=utf-8',
  'swagger-ui.css': 'text/css; charset=utf-8',
  'docs.js': 'text/javascript; charset=utf-8',
} as const;

type DocsAsset = keyof typeof docsAssets;
type SwaggerFile = Exclude<DocsAsset, 'docs.js'>;

/** Swagger UI's options; its defaults already give the API preset and the base layout. */
const swaggerOptions = {
  url: 'openapi.json',
  dom_id: '#swagger-ui',
  deepLinking: true,
  displayOperationId: true,
  filter: true,
  validatorUrl: null,
};

/** Starts Swagger UI on the page GET /docs serves (a file of its own: the page's CSP allows no inline script). */
const startScript = `window.addEventListener('load',function(){window.ui=SwaggerUIBundle(${JSON.stringify(swaggerOptions)})});\n`;

/** Swagger UI's file, without its source map reference (the maps are not served; the style sheet ends with one). */
const swaggerFile = async (name: SwaggerFile) =>
  (await packageFileText(`swagger-ui-dist/${name}`)).replace(/\/[/*][#@] sourceMappingURL=[^\n]*\s*$/, '');

const isDocsAsset = (name: string | undefined): name is DocsAsset => name !== undefined && Object.hasOwn(docsAssets, name);

/**
 * GET /docs/{asset}: a fixed allow-list of files (nothing else of the package, no paths), served as
 * core/api/static-file.ts serves a file: gzipped when the browser accepts it, with an ETag.
 */
export const handler = async (event: APIGatewayProxyEventV2): Promise<APIGatewayProxyStructuredResultV2> => {
  const asset = event.pathParameters?.asset;
  if (!isDocsAsset(asset)) {
    const requestId = requestIdOf(event);
    return staticErrorAnswer(
      requestId,
      404,
      errorBody('file_not_found', 'No such file of the documentation page', requestId, [
        { location: 'path', pointer: '/asset', message: `must be one of ${Object.keys(docsAssets).join(', ')}` },
      ]),
    );
  }
  return staticFileAnswer(
    event,
    () => staticFile(asset, () => (asset === 'docs.js' ? Promise.resolve(startScript) : swaggerFile(asset))),
    { 'content-type': docsAssets[asset], 'cache-control': 'public, max-age=3600' },
  );
};
