/**
 * A document every generator types: shapes chosen by a tag are `oneOf` with a `discriminator` (and its
 * mapping), never `if`/`then`, which most generators skip; and nothing a request sends or a success
 * answers is left untyped (a bare `{}`, or an object with no properties), which generators turn into
 * `unknown` or `Record<string, never>`. test/integration/second-generator.test.ts checks what a second
 * generator makes of it.
 */
import { readFileSync } from 'node:fs';
import { expect, test } from 'vitest';
import { openApiFile } from '#tools/openapi/openapi-file.ts';

type Schema = Record<string, unknown>;
interface Operation {
  requestBody?: { content?: Record<string, { schema?: Schema }> };
  responses: Record<string, { content?: Record<string, { schema?: Schema }> }>;
}
const document = JSON.parse(readFileSync(openApiFile, 'utf8')) as {
  paths: Record<string, Record<string, Operation>>;
  components: { schemas: Record<string, Schema> };
};

/** The one answer that is itself free-form: the OpenAPI document GET /openapi.json serves. */
const freeForm = new Set(['openapi-document']);

const isSchema = (value: unknown): value is Schema => typeof value === 'object' && value !== null && !Array.isArray(value);
const componentOf = (ref: string) => ref.split('/').at(-1) as string;
const says = (schema: Schema, ...keys: string[]) => keys.some((key) => key in schema);

/**
 * Where under `schema` (a JSON pointer-ish path) something is untyped. An `allOf` is read as its
 * members together, a later member's property standing for an earlier one's (the success envelope's
 * `data`, given its type by each route), as generators intersect them.
 */
function untypedIn(schema: Schema, at: string, seen: Set<string>): string[] {
  if (typeof schema.$ref === 'string') {
    const name = componentOf(schema.$ref);
    if (seen.has(name) || freeForm.has(name)) return [];
    seen.add(name);
    return untypedIn(document.components.schemas[name] ?? {}, `#${name}`, seen);
  }
  if (Array.isArray(schema.allOf)) {
    const members = schema.allOf
      .filter(isSchema)
      .map((member) =>
        typeof member.$ref === 'string' ? (document.components.schemas[componentOf(member.$ref)] ?? {}) : member,
      );
    const properties: Record<string, Schema> = Object.assign({}, ...members.map((member) => member.properties ?? {}));
    const rest = members.flatMap((member) => {
      const { properties: _own, ...others } = member;
      return says(others, 'items', 'oneOf', 'anyOf', 'additionalProperties') ? [others] : [];
    });
    return [
      ...Object.entries(properties).flatMap(([name, property]) => untypedIn(property, `${at}/${name}`, seen)),
      ...rest.flatMap((other) => untypedIn(other, at, seen)),
    ];
  }
  if (!says(schema, 'type', 'oneOf', 'anyOf', 'enum', 'const', 'not')) return [`${at}: no type`];
  const objectOnly = schema.type === 'object' || (Array.isArray(schema.type) && schema.type.includes('object'));
  if (objectOnly && !says(schema, 'properties', 'oneOf', 'anyOf') && !isSchema(schema.additionalProperties)) {
    return [`${at}: an object without properties`];
  }
  const children: [string, unknown][] = [
    ...Object.entries(isSchema(schema.properties) ? schema.properties : {}).map(
      ([name, child]) => [`${at}/${name}`, child] as [string, unknown],
    ),
    [`${at}/items`, schema.items],
    [`${at}/additionalProperties`, schema.additionalProperties],
    ...[...((schema.oneOf ?? []) as unknown[]), ...((schema.anyOf ?? []) as unknown[])].map(
      (branch, index) => [`${at}/oneOf/${index}`, branch] as [string, unknown],
    ),
  ];
  return children.flatMap(([where, child]) => (isSchema(child) ? untypedIn(child, where, seen) : []));
}

const operations = Object.entries(document.paths).flatMap(([path, item]) =>
  Object.entries(item).map(([method, operation]) => ({ where: `${method.toUpperCase()} ${path}`, operation })),
);

test('no schema of the document chooses a shape with if/then', () => {
  const text = JSON.stringify(document);
  expect(text).not.toMatch(/"(if|then|else)":/);
});

test('every tagged union carries its mapping, each tag value to the branch that takes it', () => {
  const unions: Schema[] = [];
  const find = (value: unknown) => {
    if (!isSchema(value) && !Array.isArray(value)) return;
    if (isSchema(value) && isSchema(value.discriminator)) unions.push(value);
    for (const child of Object.values(value as object)) find(child);
  };
  find(document.components.schemas);
  // An alert's content blocks (sent, and defined), a schedule's triggers and the integrator's events.
  expect(unions.length).toBe(4);
  for (const union of unions) {
    const { propertyName, mapping } = union.discriminator as { propertyName: string; mapping: Record<string, string> };
    // The tag's values, where it states them (its own `enum`, or the component it refers to).
    const tag = (union.properties as Record<string, { enum?: string[]; $ref?: string }>)[propertyName];
    const stated = tag?.$ref ? (document.components.schemas[componentOf(tag.$ref)] as { enum?: string[] }) : tag;
    const tagValues = (stated?.enum ?? []).sort();
    expect(Object.keys(mapping).sort(), propertyName).toEqual(tagValues);
    for (const [value, ref] of Object.entries(mapping)) {
      const branch = document.components.schemas[componentOf(ref)] as {
        properties: Record<string, { const?: string; enum?: string[] }>;
      };
      const takes = branch.properties[propertyName];
      expect(takes?.const === value || takes?.enum?.includes(value), `${ref} takes ${value}`).toBe(true);
    }
  }
});

test('nothing a request sends or a success answers is untyped', () => {
  const untyped = operations.flatMap(({ where, operation }) => {
    const bodies = Object.values(operation.requestBody?.content ?? {});
    const answers = Object.entries(operation.responses)
      .filter(([status]) => status.startsWith('2'))
      .flatMap(([, answer]) => Object.values(answer.content ?? {}));
    return [...bodies, ...answers].flatMap(({ schema }) =>
      schema ? untypedIn(schema, where, new Set()).map((problem) => `${where} ${problem}`) : [],
    );
  });
  expect([...new Set(untyped)]).toEqual([]);
});
