/**
 * The payload bucket over S3's REST API, signed by store/signed-fetch.ts rather than through the SDK's S3 client:
 * three calls on one object need none of that client's middleware, XML and checksum code (about 130 KB of every
 * bundle that reaches this module).
 */
import { type SignedFetch, type SignedRequestInit, signedFetch } from './signed-fetch.ts';

function variable(name: string): string {
  const value = process.env[name];
  if (!value) throw new Error(`Missing required environment variable ${name}`);
  return value;
}

let client: SignedFetch | undefined;

/** The bucket's signed fetch, made once per cold start. */
export function s3(): SignedFetch {
  client ??= signedFetch('s3', variable('AWS_REGION'));
  return client;
}

/**
 * The object's URL, each segment of its key URL-encoded. S3_ENDPOINT is set only off AWS (fauxqs), which answers
 * path-style requests. On AWS, virtual-hosted style (https://docs.aws.amazon.com/AmazonS3/latest/userguide/VirtualHosting.html):
 * AWS is discontinuing path-style URLs, and the bucket's generated name has no dots (a dotted name would not match
 * S3's wildcard TLS certificate). Keys are the service's own (`deliveries/…`), never with `.` or `..` segments, which
 * a URL resolves away.
 */
function objectUrl(key: string): string {
  const bucket = variable('PAYLOAD_BUCKET');
  const path = key.split('/').map(encodeURIComponent).join('/');
  const endpoint = process.env.S3_ENDPOINT;
  return endpoint
    ? `${endpoint.replace(/\/+$/, '')}/${bucket}/${path}`
    : `https://${bucket}.s3.${variable('AWS_REGION')}.amazonaws.com/${path}`;
}

/** A request S3 refused: its HTTP status and S3's error code (`NoSuchKey`, `AccessDenied`, …). */
class S3RequestError extends Error {
  constructor(
    readonly status: number,
    readonly code: string | undefined,
    request: string,
  ) {
    super(`S3 ${request} failed: ${status} ${code ?? '(no error code)'}`);
    this.name = 'S3RequestError';
  }
}

/**
 * S3's answer to one request on the object `key`; any but a 2xx is thrown as an S3RequestError. The caller reads
 * the body to its end, so the connection goes back to the pool.
 */
async function request(
  method: 'PUT' | 'GET' | 'DELETE',
  key: string,
  init: Omit<SignedRequestInit, 'method'> = {},
): Promise<Response> {
  const response = await s3().fetch(objectUrl(key), { ...init, method });
  if (response.ok) return response;
  // The error's XML body names it: <Error><Code>NoSuchKey</Code>…</Error>.
  const code = /<Code>([^<]*)<\/Code>/.exec(await response.text())?.[1];
  throw new S3RequestError(response.status, code, `${method} ${key}`);
}

/** The claim check: bodies too large for a queue message wait in the payload bucket. */
export async function putPayload(key: string, body: string): Promise<void> {
  await (await request('PUT', key, { body, headers: { 'Content-Type': 'application/json' } })).arrayBuffer();
}

/** The stored body, or undefined when it is gone (delivered, or expired by the bucket's lifecycle rule). */
export async function getPayload(key: string): Promise<string | undefined> {
  try {
    return await (await request('GET', key)).text();
  } catch (error) {
    // S3 says NoSuchKey, not AccessDenied, because the role may s3:ListBucket (lib/function-roles.ts); NoSuchBucket throws.
    if (error instanceof S3RequestError && error.code === 'NoSuchKey') return undefined;
    throw error;
  }
}

export async function deletePayload(key: string): Promise<void> {
  await (await request('DELETE', key)).arrayBuffer();
}
