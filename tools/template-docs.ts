/**
 * The field tables of docs/templates.md, made from schemas/template-bundle.schema.json: one for the
 * bundle itself, one for each object it defines (desk, table, column, …), and one for the shared
 * definitions fields refer to (`key`, `name`, …). Each goes between its marker comments, formatted
 * as prettier formats the file. `npm run generate` writes them; test/unit/generated-template-docs.test.ts
 * fails when they are stale, and a schema that gains an object type fails it until the guide has a
 * place (a marker) for its table.
 */
import { fileURLToPath } from 'node:url';
import { format, resolveConfig } from 'prettier';
import { requestSchemas } from '#schemas/index.ts';
import { code, listed, replaceBlock, table } from './markdown.ts';

export const templatesFile = fileURLToPath(new URL('../docs/templates.md', import.meta.url));

/** The JSON Schema keywords the bundle schema and the definitions it refers to use. */
export interface SchemaNode {
  $ref?: string;
  type?: string | readonly string[];
  description?: string;
  pattern?: string;
  'x-pattern-message'?: string;
  minLength?: number;
  maxLength?: number;
  minItems?: number;
  maxItems?: number;
  uniqueItems?: boolean;
  maxProperties?: number;
  propertyNames?: SchemaNode;
  additionalProperties?: boolean | SchemaNode;
  properties?: Readonly<Record<string, SchemaNode>>;
  required?: readonly string[];
  items?: SchemaNode;
  default?: unknown;
  $defs?: Readonly<Record<string, SchemaNode>>;
}

const schemas = requestSchemas as unknown as Readonly<Record<string, SchemaNode>>;
export const bundleSchema = schemas['template-bundle'] as SchemaNode;
const bundleDefs = bundleSchema.$defs ?? {};

/** The table of the bundle's own fields, and that of the shared definitions, besides one per object definition. */
export const bundleSection = 'bundle';
export const sharedSection = 'shared';

const isObject = (node: SchemaNode) => node.type === 'object';

/** Every table the guide holds, by section: the bundle, each object definition in schema order, then the shared ones. */
export const sections: readonly string[] = [
  bundleSection,
  ...Object.keys(bundleDefs).filter((name) => isObject(bundleDefs[name] as SchemaNode)),
  sharedSection,
];

export const markerOf = (section: string) => `<!-- generated: template fields ${section} (npm run generate) -->`;
const anyMarker = /<!-- generated: template fields (\S+) \(npm run generate\) -->/g;

/** A `$ref` as written in `document` (`#/$defs/key`, `text#/$defs/displayName`): the definition it names, and its document. */
function resolve(ref: string, document: string): { node: SchemaNode; document: string; name: string } {
  const [id = '', path = ''] = ref.split('#');
  const target = id || document;
  const name = path.replace(/^\/\$defs\//, '');
  const node = schemas[target]?.$defs?.[name];
  if (!node || path !== `/$defs/${name}`) throw new Error(`Cannot resolve $ref ${ref} in ${document}`);
  return { node, document: target, name };
}

/** A node and every definition its `$ref` chain reaches, outermost first: all of them apply at once. */
function layersOf(node: SchemaNode, document = 'template-bundle'): SchemaNode[] {
  if (!node.$ref) return [node];
  const target = resolve(node.$ref, document);
  return [node, ...layersOf(target.node, target.document)];
}

/** What a field allows once its layers are combined (each bound the tightest of them, each pattern kept). */
function combined(node: SchemaNode) {
  const layers = layersOf(node);
  const first = <K extends keyof SchemaNode>(key: K) => layers.find((layer) => layer[key] !== undefined)?.[key];
  const numbers = (key: 'minLength' | 'maxLength' | 'minItems' | 'maxItems') =>
    layers.flatMap((layer) => (layer[key] === undefined ? [] : [layer[key] as number]));
  const tightest = (values: number[], pick: (...values: number[]) => number) => (values.length ? pick(...values) : undefined);
  return {
    type: first('type'),
    minLength: tightest(numbers('minLength'), Math.max),
    maxLength: tightest(numbers('maxLength'), Math.min),
    minItems: tightest(numbers('minItems'), Math.max),
    maxItems: tightest(numbers('maxItems'), Math.min),
    uniqueItems: layers.some((layer) => layer.uniqueItems),
    patterns: [
      ...new Set(
        layers.flatMap((layer) => (layer.pattern ? [layer['x-pattern-message'] ?? `matches \`${layer.pattern}\``] : [])),
      ),
    ],
    maxProperties: first('maxProperties'),
    propertyNames: first('propertyNames'),
    additionalProperties: first('additionalProperties'),
    items: first('items'),
  };
}

const count = (value: number) => value.toLocaleString('en');
/** A count and its noun: `[singular, plural]`. */
const counted = (value: number, [one, many]: Noun) => `${count(value)} ${value === 1 ? one : many}`;
type Noun = readonly [string, string];
const characters: Noun = ['character', 'characters'];
const items: Noun = ['item', 'items'];
const entries: Noun = ['entry', 'entries'];

/** The bundle's own definition a node names by `$ref`, if it names one (`key`, `desk`, …). */
const localDefinition = (node: SchemaNode) =>
  node.$ref?.startsWith('#/$defs/') ? resolve(node.$ref, 'template-bundle').name : undefined;

/** A field's type: a definition of the bundle by name, else the JSON type (`array of …` for an array). */
function typeText(node: SchemaNode): string {
  const definition = localDefinition(node);
  if (definition) return code(definition);
  const { type, items, additionalProperties } = combined(node);
  if (type === 'array' && items) return `array of ${typeText(items)}`;
  if (type === 'object' && typeof additionalProperties === 'object') return `object (name to ${typeText(additionalProperties)})`;
  return listed(typeof type === 'string' ? [type] : [...(type ?? ['any'])]);
}

/** `1 to 64 characters`, `at most 2,000 characters`, `at least 1 item`, or nothing without bounds. */
function range(low: number | undefined, high: number | undefined, noun: Noun): string[] {
  if (low !== undefined && high !== undefined)
    return [low === high ? counted(low, noun) : `${count(low)} to ${counted(high, noun)}`];
  if (high !== undefined) return [`at most ${counted(high, noun)}`];
  if (low !== undefined && low > 0) return [`at least ${counted(low, noun)}`];
  return [];
}

const noLimits = '–';

/** Every bound a field's value has, as one sentence; `noLimits` when it has none. */
function limitsText(node: SchemaNode): string {
  const limits = combined(node);
  const parts = [
    ...range(limits.minLength, limits.maxLength, characters),
    ...range(limits.minItems, limits.maxItems, items),
    ...(limits.uniqueItems ? ['no repeats'] : []),
    ...limits.patterns,
    ...range(undefined, limits.maxProperties, entries),
  ];
  // A map's bounds on its names and on its values (only strings have a length).
  if (limits.propertyNames) parts.push(...limitsOf(limits.propertyNames).map((limit) => `names ${limit}`));
  if (typeof limits.additionalProperties === 'object') {
    parts.push(...limitsOf(limits.additionalProperties).map((limit) => `string values ${limit}`));
  }
  return parts.join('; ') || noLimits;
}

const limitsOf = (node: SchemaNode) => {
  const text = limitsText(node);
  return text === noLimits ? [] : [text];
};

/**
 * A field's limits. One of a shared definition's kind (`key`, `name`, …) says so, and adds only the
 * bounds of its own (the shared table states the definition's once).
 */
function fieldLimitsText(node: SchemaNode): string {
  const definition = localDefinition(node);
  if (!definition) return limitsText(node);
  return [`as ${code(definition)}`, ...limitsOf({ ...node, $ref: undefined })].join('; ');
}

/** A field's required cell: `yes`, `no`, or `no` with the value its absence means. */
function requiredText(parent: SchemaNode, name: string, node: SchemaNode): string {
  if (parent.required?.includes(name)) return 'yes';
  return node.default === undefined ? 'no' : `no (default ${code(JSON.stringify(node.default))})`;
}

/**
 * Schema text as Markdown table text: a `|` would end the cell (also in a code span, where GitHub
 * reads an escaped bar as a bar), and `_` or `*` around words would make them emphasis (`a letter or '_' then
 * letters, digits or '_'`), so they are escaped, the last two outside code spans.
 */
const prose = (text: string) =>
  text
    .split('`')
    .map((part, index) => (index % 2 === 1 ? part : part.replace(/[_*]/g, '\\$&')))
    .join('`')
    .replaceAll('|', '\\|');
function fieldsTable(object: SchemaNode): string {
  const rows = Object.entries(object.properties ?? {}).map(([name, node]) => [
    code(name),
    typeText(node),
    requiredText(object, name, node),
    prose(fieldLimitsText(node)),
    prose(node.description ?? ''),
  ]);
  return table(['Field', 'Type', 'Required', 'Limits', 'Description'], rows);
}

/** The definitions that are no objects: the kinds of value fields share. */
function sharedTable(): string {
  const rows = Object.entries(bundleDefs)
    .filter(([, node]) => !isObject(node))
    .map(([name, node]) => [code(name), typeText(node), prose(limitsText(node)), prose(node.description ?? '')]);
  return table(['Definition', 'Type', 'Limits', 'Description'], rows);
}

/** The table of one section of `sections`. */
function sectionTable(section: string): string {
  if (section === sharedSection) return sharedTable();
  const object = section === bundleSection ? bundleSchema : bundleDefs[section];
  if (!object || !isObject(object)) throw new Error(`The template bundle schema defines no object ${section}`);
  return fieldsTable(object);
}

/**
 * `document` (docs/templates.md as it is) with its field tables made afresh, as prettier writes them.
 * A marker for a section the schema no longer has is refused: its table would describe nothing.
 */
export async function generateTemplatesDoc(document: string): Promise<string> {
  const unknown = [...document.matchAll(anyMarker)]
    .map(([, section]) => section)
    .filter((section) => !sections.includes(section ?? ''));
  if (unknown.length > 0) {
    throw new Error(`${templatesFile} has markers for ${unknown.join(', ')}, which the template bundle schema does not define`);
  }
  const options = { ...(await resolveConfig(templatesFile)), filepath: templatesFile };
  let generated = document;
  for (const section of sections) {
    generated = replaceBlock(generated, markerOf(section), await format(sectionTable(section), options), templatesFile);
  }
  return generated;
}
