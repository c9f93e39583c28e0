import type { APIGatewayProxyEventV2 } from 'aws-lambda';
import { lambdaSyncPayloadBytes } from '#functions/core/aws-limits.ts';
import { badRequest, payloadTooLarge, unsupportedMediaType } from '#functions/core/errors.ts';

/**
 * What an invocation event holds besides the body, at most: the request line and header values
 * (10,240 bytes, httpApiRequestLineAndHeaderBytes) appear up to three times (as sent, as parsed query
 * parameters and cookies, in the request context), each character escaped to 6 bytes at worst, and
 * the header names and the request context's own fields.
 */
export const eventBytesBesideBody = 256 * 1024;

/** The most a body of `bytes` can take in the event: a text body's byte may be escaped to 6 (a control character as `\u00XX`; a body sent base64 takes 4/3). */
export const worstEventBytes = (bytes: number): number => eventBytesBesideBody + 6 * bytes;

/**
 * The largest body any route takes, so that the worst event it can make fits in one synchronous
 * invocation (lambdaSyncPayloadBytes): 1,004,885 bytes would, and the bound is the round number below
 * it. A larger body is our 413; one so large its event would not fit never reaches a function (API
 * Gateway's bare 500), so the bound is what keeps every refusal in the envelope.
 */
export const maxBodyBytes = 1_000_000;
if (worstEventBytes(maxBodyBytes) > lambdaSyncPayloadBytes) throw new Error('maxBodyBytes does not fit one invocation event');
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
 * nesting depth, reserved keys, and strings no field may hold, and the size as JSON (413: a YAML
 * body's aliases and escapes can make it larger than it was sent; see `checkStructure`).
 */
export function parseBody(
  event: Pick<APIGatewayProxyEventV2, 'body' | 'isBase64Encoded' | 'headers'>,
  options: { yaml?: YamlParser } = {},
): unknown {
  if (event.body === undefined || event.body === '') return undefined;
  const bytes = Buffer.from(event.body, event.isBase64Encoded ? 'base64' : 'utf8');
  if (bytes.length > maxBodyBytes) throw payloadTooLarge(`Request body is larger than ${maxBodyBytes} bytes`);
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

/**
 * The `charset` parameter of a Content-Type, lower-cased and unquoted, if there is one. Named twice
 * it is refused: readers disagree on which one counts (415).
 */
function charsetOf(parameters: readonly string[]): string | undefined {
  const charsets = parameters.flatMap((parameter) => {
    const [name = '', ...value] = parameter.split('=');
    if (name.trim().toLowerCase() !== 'charset') return [];
    return [
      value
        .join('=')
        .trim()
        .replace(/^"(.*)"$/, '$1')
        .toLowerCase(),
    ];
  });
  if (charsets.length > 1) throw unsupportedMediaType('Content-Type names its charset more than once');
  return charsets[0];
}

function parseJson(text: string): unknown {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw badRequest('Request body is not valid JSON', [], 'malformed_json');
  }
  checkUniqueNames(text);
  return value;
}

/** An object or array the scan of `checkUniqueNames` is inside of. */
interface OpenContainer {
  /** The names seen so far (an object), or undefined (an array). */
  names: Set<string> | undefined;
  /** Whether the next string is a name (an object, after `{` or `,`). */
  nameNext: boolean;
  /** The last name read (an object), or the index of the current element (an array). */
  at: string;
  /** The name or index the container is under in its parent's. */
  key: string | undefined;
}

/**
 * Refuses an object that names one property twice. JSON.parse keeps the last silently, while other
 * readers (a proxy, a firewall, the integrator's own logs) may keep the first, and YAML bodies
 * refuse it (I-JSON, RFC 7493, forbids it). One pass over text JSON.parse has accepted, so only
 * strings and the six structural characters need telling apart; names are compared decoded
 * (`"n"` and `"\u006e"` are one name). Linear: one Set per object.
 */
function checkUniqueNames(text: string): void {
  const open: OpenContainer[] = [];
  let key: string | undefined;
  for (let index = 0; index < text.length; index++) {
    const character = text.charCodeAt(index);
    const current = open.at(-1);
    if (character === 0x22 /* " */) {
      let end = index + 1;
      let escaped = false;
      for (let code = text.charCodeAt(end); code !== 0x22; code = text.charCodeAt(end)) {
        escaped ||= code === 0x5c; /* \ */
        end += code === 0x5c ? 2 : 1;
      }
      if (current?.names && current.nameNext) {
        // Decoded only when escaped: most names are plain text between their quotes.
        const name = escaped ? (JSON.parse(text.slice(index, end + 1)) as string) : text.slice(index + 1, end);
        if (current.names.has(name)) {
          const pointer = [...open.map((container) => container.key).slice(1), name]
            .map((token) => `/${(token ?? '').replaceAll('~', '~0').replaceAll('/', '~1')}`)
            .join('');
          const message = 'names a property twice';
          throw badRequest(`Request body ${message} at ${pointer}`, [{ location: 'body', pointer, message }], 'malformed_body');
        }
        current.names.add(name);
        current.nameNext = false;
        current.at = name;
      }
      index = end;
    } else if (character === 0x7b /* { */ || character === 0x5b /* [ */) {
      key = current?.at;
      open.push({ names: character === 0x7b ? new Set() : undefined, nameNext: true, at: '0', key });
    } else if (character === 0x7d /* } */ || character === 0x5d /* ] */) {
      open.pop();
    } else if (character === 0x2c /* , */ && current) {
      if (current.names) current.nameNext = true;
      else current.at = String(Number(current.at) + 1);
    }
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
 * - NUL or a lone surrogate in any string or key;
 * - a number the table cannot hold as sent (see `isStorableNumber`);
 * - anything but JSON's values (a parser that made a Map, a Set, a Date or bytes would slip past
 *   the schema, which sees no properties in them, and past this walk).
 */
function checkStructure(root: unknown): void {
  const stack: Visit[] = [{ value: root, depth: 0 }];
  // The body's size as JSON, counted as the walk goes: a YAML body's aliases and its characters that
  // JSON escapes can make it much larger than it was sent, and everything downstream (the item that
  // stores it, the answers that carry it) is bounded by maxBodyBytes of JSON.
  let jsonBytes = 0;
  const count = (bytes: number) => {
    jsonBytes += bytes;
    if (jsonBytes > maxBodyBytes) throw payloadTooLarge(`Request body is larger than ${maxBodyBytes} bytes as JSON`);
  };
  while (stack.length > 0) {
    const visit = stack.pop() as Visit;
    const { value, depth } = visit;
    if (typeof value === 'string') {
      if (unstorableCharacter.test(value)) throw malformedAt('contains a NUL character or a lone surrogate', visit);
      count(Buffer.byteLength(JSON.stringify(value)));
      continue;
    }
    if (typeof value === 'number') {
      if (!isStorableNumber(value)) throw malformedAt(unstorableNumberMessage, visit);
      count(String(value).length);
      continue;
    }
    if (typeof value === 'boolean' || value === null) {
      count(String(value).length);
      continue;
    }
    if (!isJsonContainer(value)) throw malformedAt('holds a value that is not JSON data', visit);
    if (depth >= maxBodyDepth) throw malformedAt(`nests deeper than ${maxBodyDepth} levels`, visit);
    if (Array.isArray(value)) {
      // Brackets and the commas between the children.
      count(2 + Math.max(0, value.length - 1));
      value.forEach((child, index) => stack.push({ value: child, depth: depth + 1, parent: visit, key: String(index) }));
      continue;
    }
    // The keys listed once: V8 sorts a large object's keys into insertion order each time it lists
    // them, which costs more than the rest of the walk. Listed twice (to count them, then with their
    // values), a body of 100,000 keys took this walk twice as long, growing faster than the keys.
    const keys = Object.keys(value);
    count(2 + Math.max(0, keys.length - 1)); // braces and commas, as for an array
    if (Object.hasOwn(value, '__proto__')) throw malformedAt('uses the reserved property name __proto__', visit, '__proto__');
    for (const key of keys) {
      const child = (value as Record<string, unknown>)[key];
      if (unstorableCharacter.test(key)) throw malformedAt('has a key with a NUL character or a lone surrogate', visit, key);
      count(Buffer.byteLength(JSON.stringify(key)) + 1); // and its colon
      if (key === 'constructor' && typeof child === 'object' && child !== null && !Array.isArray(child)) {
        throw malformedAt('has an object under the reserved property name constructor', visit, key);
      }
      stack.push({ value: child, depth: depth + 1, parent: visit, key });
    }
  }
}

/** A JSON array, or an object as JSON.parse makes one (or one without a prototype). */
function isJsonContainer(value: unknown): value is object {
  if (Array.isArray(value)) return true;
  if (typeof value !== 'object' || value === null) return false;
  const prototype = Object.getPrototypeOf(value) as unknown;
  return prototype === Object.prototype || prototype === null;
}

/**
 * Whether the table stores `value` as the very number that was sent, so that it reads back the
 * same (I-JSON, RFC 7493, asks the same of numbers meant to travel): integers within ±(2^53 − 1),
 * beyond which a double no longer holds every integer and the DynamoDB marshaller refuses them
 * (a 500 before this check), and fractions no smaller in magnitude than DynamoDB's 1e-130.
 * Infinities and NaN (YAML's `.inf`, `.nan`) are no JSON numbers at all.
 */
export function isStorableNumber(value: number): boolean {
  if (Number.isInteger(value)) return Number.isSafeInteger(value);
  return Number.isFinite(value) && Math.abs(value) >= 1e-130;
}

const unstorableNumberMessage =
  'holds a number outside what the service stores exactly (integers up to ±9007199254740991, fractions from 1e-130)';
