/**
 * fast-check arbitraries of the values a request schema describes, for fuzzing: close to what the
 * schema accepts, not exactly (patterns are followed when fast-check can read them, `if`/`then`
 * and `allOf` are ignored), since the point is to start near valid bodies and then break them.
 */
import fc from 'fast-check';
import { requestSchemas } from '#schemas/index.ts';

type Schema = Record<string, unknown>;

const isSchema = (value: unknown): value is Schema => typeof value === 'object' && value !== null && !Array.isArray(value);

function schemaNamed(name: string): Schema {
  const schema = (requestSchemas as Record<string, unknown>)[name];
  if (!isSchema(schema)) throw new Error(`No request schema ${name}`);
  return schema;
}

/** A `$ref` (`other#/$defs/x` or `#/$defs/x`, read in `document`): its schema and the document it is in. */
function resolve(ref: string, document: string): { schema: Schema; document: string } {
  const [file, pointer = ''] = ref.split('#');
  const target = file || document;
  let node: unknown = schemaNamed(target);
  for (const token of pointer.split('/').slice(1)) {
    node = isSchema(node) ? node[token.replaceAll('~1', '/').replaceAll('~0', '~')] : undefined;
  }
  if (!isSchema(node)) throw new Error(`${document}: ${ref} resolves to no schema`);
  return { schema: node, document: target };
}

/**
 * Values of a property, by its name, that a route needs to go further than a 404 (`templateId`:
 * a template that exists): used most of the time in place of what the schema alone would give.
 */
export type Hints = Readonly<Record<string, fc.Arbitrary<unknown>>>;

/** Values close to what the request schema `name` accepts. */
export const arbitraryOf = (name: string, hints: Hints = {}): fc.Arbitrary<unknown> =>
  arbitrary(schemaNamed(name), name, 0, hints);

function arbitrary(schema: Schema, document: string, depth: number, hints: Hints): fc.Arbitrary<unknown> {
  if (depth > 16) return fc.constant(null);
  if (typeof schema.$ref === 'string') {
    const { $ref, ...beside } = schema;
    const target = resolve($ref, document);
    // The keywords beside the reference narrow it; the target's own references are read in its document.
    return arbitrary({ ...target.schema, ...beside }, target.document, depth + 1, hints);
  }
  if ('const' in schema) return fc.constant(schema.const);
  if (Array.isArray(schema.enum)) return fc.constantFrom(...(schema.enum as unknown[]));
  const alternatives = (schema.oneOf ?? schema.anyOf) as unknown[] | undefined;
  if (Array.isArray(alternatives)) {
    return fc.oneof(...alternatives.filter(isSchema).map((branch) => arbitrary(branch, document, depth + 1, hints)));
  }
  const types = Array.isArray(schema.type)
    ? (schema.type as string[])
    : [schema.type ?? (schema.properties ? 'object' : undefined)];
  return fc.oneof(...types.map((type) => ofType(type as string | undefined, schema, document, depth, hints)));
}

function ofType(type: string | undefined, schema: Schema, document: string, depth: number, hints: Hints): fc.Arbitrary<unknown> {
  const number = (key: string, fallback: number) => (typeof schema[key] === 'number' ? (schema[key] as number) : fallback);
  switch (type) {
    case 'string':
      return stringOf(schema);
    case 'integer':
      return fc.integer({
        min: Math.max(number('minimum', -1000), -(2 ** 31)),
        max: Math.min(number('maximum', 1e6), 2 ** 31 - 1),
      });
    case 'number':
      return fc.double({ min: number('minimum', -1e6), max: number('maximum', 1e6), noNaN: true, noDefaultInfinity: true });
    case 'boolean':
      return fc.boolean();
    case 'null':
      return fc.constant(null);
    case 'array':
      return fc.array(
        isSchema(schema.items) ? arbitrary(schema.items, document, depth + 1, hints) : fc.anything({ maxDepth: 1 }),
        {
          minLength: number('minItems', 0),
          maxLength: Math.max(number('minItems', 0), Math.min(number('maxItems', 3), 3)),
        },
      );
    case 'object':
      return objectOf(schema, document, depth, hints);
    default:
      return fc.anything({ maxDepth: 2 });
  }
}

function stringOf(schema: Schema): fc.Arbitrary<string> {
  if (schema.format === 'date-time') return fc.date({ noInvalidDate: true }).map((date) => date.toISOString());
  if (schema.format === 'uri') return fc.webUrl();
  const minLength = typeof schema.minLength === 'number' ? schema.minLength : 0;
  const maxLength = Math.max(minLength, Math.min(typeof schema.maxLength === 'number' ? schema.maxLength : 20, 20));
  if (typeof schema.pattern === 'string') {
    try {
      return fc.stringMatching(new RegExp(schema.pattern, 'u'));
    } catch {
      // A pattern fast-check cannot generate from (lookarounds, Unicode classes): plain text then.
    }
  }
  return fc.string({ minLength, maxLength });
}

function objectOf(schema: Schema, document: string, depth: number, hints: Hints): fc.Arbitrary<Record<string, unknown>> {
  const properties = isSchema(schema.properties) ? schema.properties : {};
  const required = new Set(Array.isArray(schema.required) ? (schema.required as string[]) : []);
  const declared = fc.record(
    Object.fromEntries(
      Object.entries(properties)
        .filter((entry): entry is [string, Schema] => isSchema(entry[1]))
        .map(([name, property]) => {
          const generated = arbitrary(property, document, depth + 1, hints);
          const hint = Object.hasOwn(hints, name) ? hints[name] : undefined;
          return [name, hint ? fc.oneof({ weight: 3, arbitrary: hint }, generated) : generated];
        }),
    ),
    { requiredKeys: [...required].filter((name) => name in properties) },
  );
  if (!isSchema(schema.additionalProperties)) return declared;
  const names = isSchema(schema.propertyNames) ? stringOf(schema.propertyNames) : fc.string({ minLength: 1, maxLength: 12 });
  const extra = fc.dictionary(names, arbitrary(schema.additionalProperties, document, depth + 1, hints), { maxKeys: 3 });
  return fc.tuple(extra, declared).map(([more, own]) => ({ ...more, ...own }));
}
