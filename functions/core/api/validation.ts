import type { ErrorObject, ValidateFunction } from 'ajv';
import { badRequest, counted, type FieldError } from '#functions/core/errors.ts';
import { ownValue } from '#functions/core/own-property.ts';

/**
 * A request schema compiled by `npm run generate` (functions/core/api/validators/<name>.cjs): a
 * handler imports its own, so its bundle carries only that validator, and no schema compiler.
 * `Body` is the type generated from the same schema (the module's .d.cts declares it).
 */
export interface SchemaModule<Body = unknown> {
  schemaName: string;
  /** Whether a value satisfies the schema, and so is a `Body`. */
  validate: ValidateFunction<Body>;
  /**
   * Our vendor annotation `x-invalid-message`: a top-level property may name the message a body
   * with an invalid value in it gets (the spec fixes some, e.g. `Invalid development_variables format`).
   */
  invalidMessages: Record<string, string>;
  /** Our vendor annotation `x-pattern-message`: what a pattern means, so no reader decodes a regex. */
  patternMessages: Record<string, string>;
}

/** Returns the body typed when it satisfies the schema; otherwise a 400 listing every failing field. */
export function validateBody<Body>(schema: SchemaModule<Body>, body: unknown): Body {
  if (body === undefined) {
    throw badRequest(
      'Request body is required',
      [{ location: 'body', pointer: '', message: 'is required' }],
      'validation_failed',
    );
  }
  const errors = schemaErrors(schema, body);
  if (errors.length === 0) return body as Body;
  // The pointer's first token is the body's own key: `valueOf` must not find Object.prototype's.
  const prefixOf = (error: FieldError) =>
    ownValue(schema.invalidMessages, unescapePointerToken(error.pointer.split('/')[1] ?? ''));
  const headline = errors.find((error) => prefixOf(error)) ?? errors[0];
  const prefix = (headline && prefixOf(headline)) ?? 'Invalid request body';
  throw badRequest(`${prefix}${headlineDetail(errors, headline)}`, errors, 'validation_failed');
}

/**
 * The body of a route that lets callers leave it out (`bodyOptional` in its row; its handler takes the
 * body unchecked, `validatedByHandler`): `absent` when there is none, else checked as `validateBody` does.
 */
export function optionalBody<Body>(schema: SchemaModule<Body>, body: unknown, absent: Body): Body {
  return body === undefined ? absent : validateBody(schema, body);
}

/** `: <pointer> <message>` of the error a message leads with, for the line that sums a 400 up. */
export const headlineDetail = (errors: readonly FieldError[], headline = errors[0]) =>
  headline ? `: ${headline.pointer || 'body'} ${headline.message}` : '';

/** Every way `value` fails the schema, one readable line per field (none when it passes). */
export function schemaErrors(schema: SchemaModule, value: unknown): FieldError[] {
  return schema.validate(value) ? [] : describeErrors(schema.validate.errors ?? [], schema.patternMessages);
}

const escapePointerToken = (token: string) => token.replaceAll('~', '~0').replaceAll('/', '~1');
const unescapePointerToken = (token: string) => token.replaceAll('~1', '/').replaceAll('~0', '~');

/**
 * Turns ajv's errors into one readable line per field. For `oneOf`/`anyOf`, the branches' bare
 * type mismatches are folded into one "must be X or Y", and the alternation error itself is
 * dropped when a branch reported something more precise below it. Linear in the number of errors
 * (a hostile body can make ajv report one per key): each lookup below is a Map or Set.
 */
export function describeErrors(errors: readonly ErrorObject[], patternMessages: Record<string, string> = {}): FieldError[] {
  const alternationPaths = new Set(
    errors.filter((error) => error.keyword === 'oneOf' || error.keyword === 'anyOf').map((error) => error.instancePath),
  );
  const isBranchTypeMismatch = (error: ErrorObject) => error.keyword === 'type' && alternationPaths.has(error.instancePath);
  const branchTypes = new Map<string, string[]>();
  // Paths that have a precise error somewhere below them (instance paths nest at most maxBodyDepth deep).
  const pathsWithDeeperErrors = new Set<string>();
  for (const error of errors) {
    if (isBranchTypeMismatch(error)) {
      const types = branchTypes.get(error.instancePath) ?? [];
      types.push(...typeList(error.params.type));
      branchTypes.set(error.instancePath, types);
      continue;
    }
    for (let end = error.instancePath.lastIndexOf('/'); end > 0; end = error.instancePath.lastIndexOf('/', end - 1)) {
      pathsWithDeeperErrors.add(error.instancePath.slice(0, end));
    }
    if (error.instancePath !== '') pathsWithDeeperErrors.add('');
  }
  const described: FieldError[] = [];
  for (const error of errors) {
    if (isBranchTypeMismatch(error)) continue;
    // A tagged union (`discriminator`: a trigger's or a block's `type`) whose tag is missing or
    // unknown: the schema's own rule for the tag (required, one of its values) names the field.
    if (error.keyword === 'oneOf' || error.keyword === 'anyOf' || error.keyword === 'discriminator') {
      if (pathsWithDeeperErrors.has(error.instancePath)) continue;
      const types = branchTypes.get(error.instancePath) ?? [];
      described.push({
        location: 'body',
        pointer: error.instancePath,
        message: types.length > 0 ? `must be ${joinAlternatives(types)}` : 'does not match any allowed shape',
      });
      continue;
    }
    described.push(describeError(error, patternMessages));
  }
  const seen = new Set<string>();
  return described.filter((error) => {
    const key = `${error.pointer}\u0000${error.message}`;
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
}

const typeList = (type: unknown): string[] => (Array.isArray(type) ? type : String(type).split(','));
const joinAlternatives = (items: string[]) =>
  items.length <= 1 ? (items[0] ?? '') : `${items.slice(0, -1).join(', ')} or ${items.at(-1)}`;

function describeError(error: ErrorObject, patternMessages: Record<string, string>): FieldError {
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
      return at(
        path,
        params.limit === 1 ? 'must not be empty' : `must be at least ${counted(Number(params.limit), 'character')} long`,
      );
    case 'maxLength':
      return at(path, `must be at most ${counted(Number(params.limit), 'character')} long`);
    case 'minimum':
      return at(path, `must be >= ${params.limit}`);
    case 'maximum':
      return at(path, `must be <= ${params.limit}`);
    case 'minItems':
      return at(path, `must have at least ${counted(Number(params.limit), 'item')}`);
    case 'maxItems':
      return at(path, `must have at most ${counted(Number(params.limit), 'item')}`);
    case 'maxProperties':
      return at(path, `must have at most ${counted(Number(params.limit), 'property', 'properties')}`);
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
      // npm run generate refuses a pattern without its message, so the fallback is never a regular expression either.
      return at(path, ownValue(patternMessages, String(params.pattern)) ?? 'is not in the form this field takes');
    case 'format':
      return at(path, `must be a valid ${params.format}`);
    default:
      return at(path, error.message ?? 'is invalid');
  }
}
