import type { APIGatewayProxyEventV2 } from 'aws-lambda';
import { badRequest, payloadTooLarge, unsupportedMediaType } from '#functions/core/errors.ts';

export const maxBodyBytes = 1024 * 1024;
export const maxBodyDepth = 32;

const jsonMediaType = /^application\/(?:[\w.+-]+\+)?json$/;
export const yamlMediaType = /^(?:application|text)\/(?:x-)?yaml$/;

/** Turns YAML text into a value, or throws a 400 (see yaml-body.ts). */
export type YamlParser = (text: string) => unknown;
const strictUtf8 = new TextDecoder('utf-8', { fatal: true });

/**
 * The request's body, or `undefined` when there is none. JSON always; YAML too when a YAML parser
 * is given (only the routes that take YAML carry the parser in their bundle). Checks, in order:
 * size (413), content type (415), UTF-8 (400), syntax (400), nesting depth and `__proto__` keys (400).
 */
export function parseBody(
  event: Pick<APIGatewayProxyEventV2, 'body' | 'isBase64Encoded' | 'headers'>,
  options: { yaml?: YamlParser; maxBytes?: number } = {},
): unknown {
  if (event.body === undefined || event.body === '') return undefined;
  const bytes = Buffer.from(event.body, event.isBase64Encoded ? 'base64' : 'utf8');
  const limit = options.maxBytes ?? maxBodyBytes;
  if (bytes.length > limit) throw payloadTooLarge(`Request body is larger than ${limit} bytes`);
  const mediaType = (event.headers['content-type'] ?? '').split(';')[0]?.trim().toLowerCase() ?? '';
  const parseYaml = options.yaml && yamlMediaType.test(mediaType) ? options.yaml : undefined;
  if (!parseYaml && !jsonMediaType.test(mediaType)) {
    const accepted = options.yaml ? 'application/json or application/yaml' : 'application/json';
    throw unsupportedMediaType(`Content-Type must be ${accepted}, not ${mediaType || 'absent'}`);
  }
  let text: string;
  try {
    text = strictUtf8.decode(bytes);
  } catch {
    throw badRequest('Request body is not valid UTF-8', [], 'malformed_body');
  }
  const value = parseYaml ? parseYaml(text) : parseJson(text);
  checkStructure(value);
  return value;
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    throw badRequest('Request body is not valid JSON', [], 'malformed_json');
  }
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
