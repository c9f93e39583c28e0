import type { APIGatewayProxyEventV2 } from 'aws-lambda';
import { badRequest, payloadTooLarge, unsupportedMediaType } from '../errors.ts';

export const maxBodyBytes = 1024 * 1024;
export const maxBodyDepth = 32;

const jsonMediaType = /^application\/(?:[\w.+-]+\+)?json$/;
const strictUtf8 = new TextDecoder('utf-8', { fatal: true });

/**
 * The request's JSON body, or `undefined` when there is none. Checks, in order: size (413),
 * content type (415), UTF-8 (400), JSON syntax (400), nesting depth and `__proto__` keys (400).
 */
export function parseJsonBody(event: Pick<APIGatewayProxyEventV2, 'body' | 'isBase64Encoded' | 'headers'>): unknown {
  if (event.body === undefined || event.body === '') return undefined;
  const bytes = Buffer.from(event.body, event.isBase64Encoded ? 'base64' : 'utf8');
  if (bytes.length > maxBodyBytes) throw payloadTooLarge(`Request body is larger than ${maxBodyBytes} bytes`);
  const mediaType = (event.headers['content-type'] ?? '').split(';')[0]?.trim().toLowerCase() ?? '';
  if (!jsonMediaType.test(mediaType)) {
    throw unsupportedMediaType(`Content-Type must be application/json, not ${mediaType || 'absent'}`);
  }
  let text: string;
  try {
    text = strictUtf8.decode(bytes);
  } catch {
    throw badRequest('Request body is not valid UTF-8', [], 'malformed_body');
  }
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw badRequest('Request body is not valid JSON', [], 'malformed_json');
  }
  checkStructure(value);
  return value;
}

/** Iterative, so that hostile nesting cannot exhaust the stack. */
function checkStructure(root: unknown): void {
  const stack: Array<{ value: unknown; depth: number }> = [{ value: root, depth: 0 }];
  while (stack.length > 0) {
    const { value, depth } = stack.pop() as { value: unknown; depth: number };
    if (typeof value !== 'object' || value === null) continue;
    if (depth >= maxBodyDepth) {
      throw badRequest(`Request body nests deeper than ${maxBodyDepth} levels`, [], 'malformed_body');
    }
    if (!Array.isArray(value) && Object.hasOwn(value, '__proto__')) {
      throw badRequest('Request body uses the reserved property name __proto__', [], 'malformed_body');
    }
    for (const child of Object.values(value)) stack.push({ value: child, depth: depth + 1 });
  }
}
