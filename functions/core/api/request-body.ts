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
 * size (413), content type and charset (415), UTF-8 (400), syntax (400), then the structure (400):
 * nesting depth, reserved keys, and strings no field may hold (see `checkStructure`).
 */
export function parseBody(
  event: Pick<APIGatewayProxyEventV2, 'body' | 'isBase64Encoded' | 'headers'>,
  options: { yaml?: YamlParser; maxBytes?: number } = {},
): unknown {
  if (event.body === undefined || event.body === '') return undefined;
  const bytes = Buffer.from(event.body, event.isBase64Encoded ? 'base64' : 'utf8');
  const limit = options.maxBytes ?? maxBodyBytes;
  if (bytes.length > limit) throw payloadTooLarge(`Request body is larger than ${limit} bytes`);
  const [type = '', ...parameters] = (event.headers['content-type'] ?? '').split(';');
  const mediaType = type.trim().toLowerCase();
  const parseYaml = options.yaml && yamlMediaType.test(mediaType) ? options.yaml : undefined;
  if (!parseYaml && !jsonMediaType.test(mediaType)) {
    const accepted = options.yaml ? 'application/json or application/yaml' : 'application/json';
    throw unsupportedMediaType(`Content-Type must be ${accepted}, not ${mediaType || 'absent'}`);
  }
  const charset = charsetOf(parameters);
  // Decoding another charset as UTF-8 would store something other than what was sent.
  if (charset !== undefined && charset !== 'utf-8' && charset !== 'utf8') {
    throw unsupportedMediaType(`Request bodies must be UTF-8, not charset=${charset}`);
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

/** The `charset` parameter of a Content-Type, lower-cased and unquoted, if there is one. */
function charsetOf(parameters: readonly string[]): string | undefined {
  for (const parameter of parameters) {
    const [name = '', ...value] = parameter.split('=');
    if (name.trim().toLowerCase() === 'charset')
      return value
        .join('=')
        .trim()
        .replace(/^"(.*)"$/, '$1')
        .toLowerCase();
  }
  return undefined;
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    throw badRequest('Request body is not valid JSON', [], 'malformed_json');
  }
}

/**
 * NUL and lone surrogates (`"\ud800"` is valid JSON): no field has a use for them, and they break
 * what reads the data later (C strings, UTF-8 encoders, other JSON parsers). With the `u` flag a
 * surrogate pair is one character, so `\p{Cs}` matches only a lone one.
 */
// eslint-disable-next-line no-control-regex -- refusing NUL is the point
const unstorableCharacter = /[\u0000\p{Cs}]/u;

interface Visit {
  value: unknown;
  depth: number;
  /** How it was reached, for the pointer of an error (built only then). */
  parent?: Visit;
  key?: string;
}

const pointerOf = (visit: Visit | undefined): string => {
  const tokens: string[] = [];
  for (let at = visit; at?.key !== undefined; at = at.parent) tokens.push(at.key.replaceAll('~', '~0').replaceAll('/', '~1'));
  return tokens
    .reverse()
    .map((token) => `/${token}`)
    .join('');
};

const malformedAt = (message: string, visit: Visit, key?: string) => {
  const pointer = pointerOf(key === undefined ? visit : { value: undefined, depth: 0, parent: visit, key });
  return badRequest(
    `Request body ${message} at ${pointer || 'its root'}`,
    [{ location: 'body', pointer, message }],
    'malformed_body',
  );
};

/**
 * What no schema can be trusted to refuse, over the whole body. Iterative, so that hostile nesting
 * cannot exhaust the stack:
 * - nesting deeper than `maxBodyDepth`;
 * - a `__proto__` key (it would reach the prototype of whatever copies the object);
 * - a `constructor` key holding an object: the DynamoDB marshaller decides a value's type by its
 *   `constructor.name`, so `{"constructor": {"name": "Set"}}` would be marshalled as a set (a 500);
 *   a `constructor` holding anything else is stored as the plain key it is;
 * - NUL or a lone surrogate in any string or key.
 */
function checkStructure(root: unknown): void {
  const stack: Visit[] = [{ value: root, depth: 0 }];
  while (stack.length > 0) {
    const visit = stack.pop() as Visit;
    const { value, depth } = visit;
    if (typeof value === 'string') {
      if (unstorableCharacter.test(value)) throw malformedAt('contains a NUL character or a lone surrogate', visit);
      continue;
    }
    if (typeof value !== 'object' || value === null) continue;
    if (depth >= maxBodyDepth) throw malformedAt(`nests deeper than ${maxBodyDepth} levels`, visit);
    if (Array.isArray(value)) {
      value.forEach((child, index) => stack.push({ value: child, depth: depth + 1, parent: visit, key: String(index) }));
      continue;
    }
    if (Object.hasOwn(value, '__proto__')) throw malformedAt('uses the reserved property name __proto__', visit, '__proto__');
    for (const [key, child] of Object.entries(value)) {
      if (unstorableCharacter.test(key)) throw malformedAt('has a key with a NUL character or a lone surrogate', visit, key);
      if (key === 'constructor' && typeof child === 'object' && child !== null && !Array.isArray(child)) {
        throw malformedAt('has an object under the reserved property name constructor', visit, key);
      }
      stack.push({ value: child, depth: depth + 1, parent: visit, key });
    }
  }
}
