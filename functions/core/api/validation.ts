import type { ErrorObject } from 'ajv';
import { type RequestSchemaName, requestSchemas, validatorName } from '../../../schemas/index.ts';
import { badRequest, type FieldError } from '../errors.ts';
import validators from './validators.generated.cjs';

/**
 * Our vendor annotation: a top-level property may name the message a body with an invalid value
 * in it gets (the spec fixes some, e.g. `Invalid development_variables format`).
 */
const invalidMessageKeyword = 'x-invalid-message';

/** Returns the body typed when it satisfies the named schema; otherwise a 400 listing every failing field. */
export function validateBody<T>(name: RequestSchemaName, body: unknown): T {
  if (body === undefined) {
    throw badRequest('Request body is required', [{ location: 'body', pointer: '', message: 'is required' }]);
  }
  const errors = schemaErrors(name, body);
  if (errors.length === 0) return body as T;
  const properties: Record<string, Record<string, unknown>> = requestSchemas[name].properties ?? {};
  const prefixOf = (error: FieldError) => {
    const topProperty = unescapePointerToken(error.pointer.split('/')[1] ?? '');
    return properties[topProperty]?.[invalidMessageKeyword] as string | undefined;
  };
  const headline = errors.find((error) => prefixOf(error)) ?? errors[0];
  const prefix = (headline && prefixOf(headline)) ?? 'Invalid request body';
  throw badRequest(`${prefix}${headlineDetail(errors, headline)}`, errors, 'validation_failed');
}

/** `: <pointer> <message>` of the error a message leads with, for the line that sums a 400 up. */
export const headlineDetail = (errors: readonly FieldError[], headline = errors[0]) =>
  headline ? `: ${headline.pointer || 'body'} ${headline.message}` : '';

/** Every way `value` fails the named schema, one readable line per field (none when it passes). */
export function schemaErrors(name: RequestSchemaName, value: unknown): FieldError[] {
  // Compiled ahead of time by `npm run generate`: no schema compiler in the bundle, no compile at cold start.
  const validate = validators[validatorName(name)];
  if (!validate) throw new Error(`No generated validator for schema ${name}: run npm run generate`);
  return validate(value) ? [] : describeErrors(validate.errors ?? []);
}

const escapePointerToken = (token: string) => token.replaceAll('~', '~0').replaceAll('/', '~1');
const unescapePointerToken = (token: string) => token.replaceAll('~1', '/').replaceAll('~0', '~');

/**
 * Turns ajv's errors into one readable line per field. For `oneOf`/`anyOf`, the branches' bare
 * type mismatches are folded into one "must be X or Y", and the alternation error itself is
 * dropped when a branch reported something more precise below it.
 */
export function describeErrors(errors: readonly ErrorObject[]): FieldError[] {
  const alternationPaths = new Set(
    errors.filter((error) => error.keyword === 'oneOf' || error.keyword === 'anyOf').map((error) => error.instancePath),
  );
  const isBranchTypeMismatch = (error: ErrorObject) => error.keyword === 'type' && alternationPaths.has(error.instancePath);
  const described: FieldError[] = [];
  for (const error of errors) {
    // An `if`/`then` failure (a trigger's kind-specific rules) always comes with the errors of
    // its `then` branch, which name the fields; the summary line adds nothing.
    if (isBranchTypeMismatch(error) || error.keyword === 'if') continue;
    if (error.keyword === 'oneOf' || error.keyword === 'anyOf') {
      const deeper = errors.some(
        (other) => other !== error && !isBranchTypeMismatch(other) && other.instancePath.startsWith(`${error.instancePath}/`),
      );
      if (deeper) continue;
      const types = errors
        .filter((other) => isBranchTypeMismatch(other) && other.instancePath === error.instancePath)
        .flatMap((other) => typeList(other.params.type));
      described.push({
        location: 'body',
        pointer: error.instancePath,
        message: types.length > 0 ? `must be ${joinAlternatives(types)}` : 'does not match any allowed shape',
      });
      continue;
    }
    described.push(describeError(error));
  }
  const seen = new Set<string>();
  return described.filter((error) => {
    const key = `${error.pointer}\u0000${error.message}`;
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
}

/**
 * Our vendor annotation: a schema with a `pattern` may say in words what the pattern means, so
 * that a reader never has to decode a regular expression. Collected once from every schema.
 */
const patternMessageKeyword = 'x-pattern-message';
let patternMessages: Map<string, string> | undefined;

function patternMessage(pattern: string): string | undefined {
  if (!patternMessages) {
    patternMessages = new Map();
    const pending: unknown[] = Object.values(requestSchemas);
    while (pending.length > 0) {
      const node = pending.pop();
      if (typeof node !== 'object' || node === null) continue;
      const { pattern: nodePattern, [patternMessageKeyword]: message } = node as Record<string, unknown>;
      if (typeof nodePattern === 'string' && typeof message === 'string') patternMessages.set(nodePattern, message);
      pending.push(...Object.values(node));
    }
  }
  return patternMessages.get(pattern);
}

const typeList = (type: unknown): string[] => (Array.isArray(type) ? type : String(type).split(','));
const joinAlternatives = (items: string[]) =>
  items.length <= 1 ? (items[0] ?? '') : `${items.slice(0, -1).join(', ')} or ${items.at(-1)}`;

function describeError(error: ErrorObject): FieldError {
  const at = (pointer: string, message: string): FieldError => ({ location: 'body', pointer, message });
  const path = error.instancePath;
  const params = error.params as Record<string, unknown>;
  switch (error.keyword) {
    case 'required':
      return at(`${path}/${escapePointerToken(String(params.missingProperty))}`, 'is required');
    case 'additionalProperties':
      return at(`${path}/${escapePointerToken(String(params.additionalProperty))}`, 'is not allowed');
    case 'propertyNames':
      return at(`${path}/${escapePointerToken(String(params.propertyName))}`, 'is not an allowed name');
    case 'type':
      return at(path, `must be ${joinAlternatives(typeList(params.type))}`);
    case 'minLength':
      return at(path, params.limit === 1 ? 'must not be empty' : `must be at least ${params.limit} characters long`);
    case 'maxLength':
      return at(path, `must be at most ${params.limit} characters long`);
    case 'minimum':
      return at(path, `must be >= ${params.limit}`);
    case 'maximum':
      return at(path, `must be <= ${params.limit}`);
    case 'minItems':
      return at(path, `must have at least ${params.limit} items`);
    case 'maxItems':
      return at(path, `must have at most ${params.limit} items`);
    case 'maxProperties':
      return at(path, `must have at most ${params.limit} properties`);
    case 'uniqueItems':
      return at(
        path,
        `must not repeat an item (items ${Math.min(Number(params.i), Number(params.j))} and ${Math.max(Number(params.i), Number(params.j))} are equal)`,
      );
    case 'enum':
      return at(path, `must be one of ${(params.allowedValues as unknown[]).map((value) => JSON.stringify(value)).join(', ')}`);
    case 'const':
      return at(path, `must be ${JSON.stringify(params.allowedValue)}`);
    case 'pattern':
      return at(path, patternMessage(String(params.pattern)) ?? `must match the pattern ${params.pattern}`);
    case 'format':
      return at(path, `must be a valid ${params.format}`);
    default:
      return at(path, error.message ?? 'is invalid');
  }
}
