import { createHash } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { basename } from 'node:path';
import { gzipSync } from 'node:zlib';
import type { APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2 } from 'aws-lambda';
import { requestIdOf } from '#functions/core/api/request-id.ts';
import { type errorBody, internalErrorBody } from '#functions/core/errors.ts';

/**
 * Files the public documentation routes serve (GET /openapi.json, GET /docs/{asset}): read once per
 * container, gzipped when the caller accepts it, with an ETag for conditional requests. These routes do
 * without httpHandler: its ApiResponse carries text, not the base64 a compressed body needs, and its
 * authentication would add the DynamoDB client to bundles that need none.
 */

const resolve = createRequire(import.meta.url).resolve;

/**
 * A file the route table lists in a route's `packageFiles` (a package's file, or `#docs/...` of this
 * project): from where Node.js resolves it (the twin, the tests) or, in the Lambda bundle, which has no
 * node_modules and no project around it, from beside index.mjs, where the stack copies it instead of
 * bundling it into the code every cold start loads.
 */
export async function packageFileText(specifier: string): Promise<string> {
  let location: string | URL;
  try {
    location = resolve(specifier);
  } catch {
    location = new URL(`./${basename(specifier)}`, import.meta.url);
  }
  return readFile(location, 'utf8');
}

export interface StaticFile {
  plain: Buffer;
  gzipped: Buffer;
  etag: string;
}

const files = new Map<string, Promise<StaticFile>>();

/** The file `load` gives, prepared once per container under `key` (a failed load is tried again next time). */
export function staticFile(key: string, load: () => Promise<string>): Promise<StaticFile> {
  let file = files.get(key);
  if (!file) {
    file = load().then((text) => {
      const plain = Buffer.from(text, 'utf8');
      return {
        plain,
        gzipped: gzipSync(plain),
        etag: `"${createHash('sha256').update(plain).digest('base64url').slice(0, 27)}"`,
      };
    });
    file.catch(() => files.delete(key));
    files.set(key, file);
  }
  return file;
}

/** Whether Accept-Encoding lists gzip (or `*`) with a weight above 0 (`gzip;q=0` refuses it). */
function acceptsGzip(acceptEncoding = ''): boolean {
  return acceptEncoding.split(',').some((entry) => {
    const [coding = '', ...parameters] = entry.split(';').map((part) => part.trim().toLowerCase());
    const weight = parameters.find((parameter) => parameter.startsWith('q='));
    return (coding === 'gzip' || coding === '*') && (weight === undefined || Number(weight.slice(2)) > 0);
  });
}

/** An error answer as httpHandler writes it. */
export const staticErrorAnswer = (
  requestId: string,
  status: number,
  body: ReturnType<typeof errorBody>,
): APIGatewayProxyStructuredResultV2 => ({
  statusCode: status,
  headers: { 'content-type': 'application/json; charset=utf-8', 'cache-control': 'no-store', 'x-request-id': requestId },
  body: JSON.stringify(body),
});

/**
 * The answer with the file `prepare` gives: 304 when `If-None-Match` names its ETag, else the file, gzipped
 * when accepted; 500 (logged) when it cannot be read.
 */
export async function staticFileAnswer(
  event: APIGatewayProxyEventV2,
  prepare: () => Promise<StaticFile>,
  headers: { 'content-type': string; 'cache-control': string },
): Promise<APIGatewayProxyStructuredResultV2> {
  const requestId = requestIdOf(event);
  let file: StaticFile;
  try {
    file = await prepare();
  } catch (error) {
    console.error(
      JSON.stringify({
        level: 'ERROR',
        message: 'Static file unavailable',
        path: event.rawPath,
        requestId,
        error: String(error),
      }),
    );
    return staticErrorAnswer(requestId, 500, internalErrorBody(requestId));
  }
  const answerHeaders = {
    ...headers,
    etag: file.etag,
    vary: 'accept-encoding',
    'x-content-type-options': 'nosniff',
    'x-request-id': requestId,
  };
  const known = (event.headers?.['if-none-match'] ?? '').split(',').map((tag) => tag.trim().replace(/^W\//, ''));
  if (known.includes(file.etag) || known.includes('*')) return { statusCode: 304, headers: answerHeaders };
  const gzip = acceptsGzip(event.headers?.['accept-encoding']);
  return {
    statusCode: 200,
    headers: gzip ? { ...answerHeaders, 'content-encoding': 'gzip' } : answerHeaders,
    body: (gzip ? file.gzipped : file.plain).toString('base64'),
    isBase64Encoded: true,
  };
}
