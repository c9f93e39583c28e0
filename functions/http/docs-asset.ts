import { createHash } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { gzipSync } from 'node:zlib';
import type { APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2 } from 'aws-lambda';
import { requestIdOf } from '#functions/core/api/request-id.ts';
import { errorBody, internalErrorBody } from '#functions/core/errors.ts';

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

const resolvePackageFile = createRequire(import.meta.url).resolve;

/**
 * Swagger UI's files come from the installed package (the twin, the tests) or, in the Lambda
 * bundle, from beside index.mjs: the route table lists them as `packageFiles`, which the stack
 * copies there instead of bundling 1.7 MB of script into the code every cold start loads.
 */
async function swaggerFile(name: SwaggerFile): Promise<string> {
  let location: string | URL;
  try {
    location = resolvePackageFile(`swagger-ui-dist/${name}`);
  } catch {
    location = new URL(`./${name}`, import.meta.url); // bundled: no node_modules
  }
  const text = await readFile(location, 'utf8');
  // The source maps are not served: no reference to them (the style sheet ends with one).
  return text.replace(/\/[/*][#@] sourceMappingURL=[^\n]*\s*$/, '');
}

interface Prepared {
  plain: Buffer;
  gzipped: Buffer;
  etag: string;
}

const prepared = new Map<DocsAsset, Promise<Prepared>>();

/** Read (and compressed) once per container: Swagger UI's script is 1.7 MB, 0.5 MB gzipped. */
function prepare(asset: DocsAsset): Promise<Prepared> {
  let entry = prepared.get(asset);
  if (!entry) {
    entry = (asset === 'docs.js' ? Promise.resolve(startScript) : swaggerFile(asset)).then((text) => {
      const plain = Buffer.from(text, 'utf8');
      return {
        plain,
        gzipped: gzipSync(plain),
        etag: `"${createHash('sha256').update(plain).digest('base64url').slice(0, 27)}"`,
      };
    });
    entry.catch(() => prepared.delete(asset));
    prepared.set(asset, entry);
  }
  return entry;
}

/** Whether Accept-Encoding lists gzip (or `*`) with a weight above 0 (`gzip;q=0` refuses it). */
function acceptsGzip(acceptEncoding = ''): boolean {
  return acceptEncoding.split(',').some((entry) => {
    const [coding = '', ...parameters] = entry.split(';').map((part) => part.trim().toLowerCase());
    const weight = parameters.find((parameter) => parameter.startsWith('q='));
    return (coding === 'gzip' || coding === '*') && (weight === undefined || Number(weight.slice(2)) > 0);
  });
}

const isDocsAsset = (name: string | undefined): name is DocsAsset => name !== undefined && Object.hasOwn(docsAssets, name);

/** An error answer as httpHandler writes it. */
const errorAnswer = (requestId: string, status: number, body: ReturnType<typeof errorBody>) => ({
  statusCode: status,
  headers: { 'content-type': 'application/json; charset=utf-8', 'cache-control': 'no-store', 'x-request-id': requestId },
  body: JSON.stringify(body),
});

/**
 * GET /docs/{asset}: a fixed allow-list of files (nothing else of the package, no paths), gzipped
 * when the browser accepts it, with an ETag. Static and public, so no httpHandler (see
 * openapi.ts): its ApiResponse carries text, not the base64 a compressed body needs, and its
 * authentication would add its DynamoDB client to a bundle that already holds Swagger UI.
 */
export const handler = async (event: APIGatewayProxyEventV2): Promise<APIGatewayProxyStructuredResultV2> => {
  const requestId = requestIdOf(event);
  const asset = event.pathParameters?.asset;
  if (!isDocsAsset(asset)) {
    return errorAnswer(
      requestId,
      404,
      errorBody('file_not_found', 'No such file of the documentation page', requestId, [
        { location: 'path', pointer: '/asset', message: `must be one of ${Object.keys(docsAssets).join(', ')}` },
      ]),
    );
  }
  let file: Prepared;
  try {
    file = await prepare(asset);
  } catch (error) {
    console.error(
      JSON.stringify({ level: 'ERROR', message: 'Documentation asset unavailable', asset, requestId, error: String(error) }),
    );
    return errorAnswer(requestId, 500, internalErrorBody(requestId));
  }
  const headers = {
    'content-type': docsAssets[asset],
    'cache-control': 'public, max-age=3600',
    etag: file.etag,
    vary: 'accept-encoding',
    'x-content-type-options': 'nosniff',
    'x-request-id': requestId,
  };
  const known = (event.headers['if-none-match'] ?? '').split(',').map((tag) => tag.trim().replace(/^W\//, ''));
  if (known.includes(file.etag) || known.includes('*')) return { statusCode: 304, headers };
  const gzip = acceptsGzip(event.headers['accept-encoding']);
  return {
    statusCode: 200,
    headers: gzip ? { ...headers, 'content-encoding': 'gzip' } : headers,
    body: (gzip ? file.gzipped : file.plain).toString('base64'),
    isBase64Encoded: true,
  };
};
