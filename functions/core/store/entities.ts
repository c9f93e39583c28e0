/**
 * The entity layer's core: what an item of the table is, declared once (entity-declarations.ts).
 * The vocabulary is ElectroDB's (entities, their facets, indexes and collections), without its
 * package: its transactions cannot carry this service's idempotency, follow-up, count and claim
 * items. A declaration is data: its key templates, made of literal text and typed facets, give the
 * item's key, its index entries and the prefixes that query it; its claims, count and sweep say the
 * rules the repositories keep.
 */
import { createHash } from 'node:crypto';
import type { FollowUpKind } from '#functions/core/follow-ups/follow-up-repository.ts';
import { foldedText, nameKey } from '#functions/core/names.ts';
import { type IndexName, tableDefinition } from './table-definition.ts';

/**
 * DynamoDB's limits on a key attribute's value, in bytes of its UTF-8 encoding (not characters): a
 * partition key at most 2048, a sort key at most 1024. Amazon DynamoDB Developer Guide: "Constraints
 * in Amazon DynamoDB", Partition keys and sort keys
 * (https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/Constraints.html#limits-partition-sort-keys);
 * strings are UTF-8 and a key string's limit is in bytes ("Supported data types and naming rules",
 * String: .../HowItWorks.NamingRulesDataTypes.html#HowItWorks.DataTypes.String); a global secondary
 * index's key attributes have the same two limits ("Detecting and correcting index key violations",
 * .../GSI.OnlineOps.ViolationDetection.html). A request with a key past them is refused
 * (ValidationException), which the service would answer 500: `writeKey` keeps every key within them.
 */
export const keyBytes = { partition: 2048, sort: 1024 } as const;

/** Which attribute of a key a template writes: it says the limit (`keyBytes`). */
export type KeyAttribute = keyof typeof keyBytes;

/** How a facet's value is written into a key (`letter`: one letter per value, from `letters`). */
export type FacetKind = 'decimal' | 'sortable' | 'text' | 'folded' | 'name-key' | 'letter';

/**
 * A named, typed value in a key template. Named as the records' attribute, so that a record is its
 * own facets; a name has one type wherever the entity uses it (not always one kind: ids are
 * `decimal` in partition keys and `sortable` in sort keys).
 */
export interface Facet<Name extends string = string, Value = never> {
  readonly name: Name;
  readonly kind: FacetKind;
  readonly write: (value: Value) => string;
  /** A `letter` facet's values and their letters. */
  readonly letters?: Readonly<Record<string, string>>;
}

type AnyFacet = Facet<string, never>;

/** An integer as it is written (`TENANT#7`). */
export const decimal = <Name extends string>(name: Name): Facet<Name, number> => ({ name, kind: 'decimal', write: String });

/** An integer zero-padded to 12 digits, so that keys order as numbers do (9 before 10). */
export const sortable = <Name extends string>(name: Name): Facet<Name, number> => ({
  name,
  kind: 'sortable',
  write: (value) => value.toString().padStart(12, '0'),
});

/** Text as it is (a hash, a slot, a name compared exactly). */
export const text = <Name extends string>(name: Name): Facet<Name, string> => ({ name, kind: 'text', write: (value) => value });

/**
 * Text as a reader sees it (names.ts `foldedText`): what must be unique as a reader tells names apart.
 * Written as its digest where it would take its key past DynamoDB's limit (`writeKey`).
 */
export const folded = <Name extends string>(name: Name): Facet<Name, string> => ({ name, kind: 'folded', write: foldedText });

/** A name as names compare where one must be unique (names.ts `nameKey`: folded, runs of spaces collapsed); as `folded`, a digest past the limit. */
export const nameKeyed = <Name extends string>(name: Name): Facet<Name, string> => ({ name, kind: 'name-key', write: nameKey });

/** One of a few values, each written as its letter. */
export const letter = <Name extends string, Value extends string>(
  name: Name,
  letters: Readonly<Record<Value, string>>,
): Facet<Name, Value> => ({ name, kind: 'letter', letters, write: (value) => letters[value] });

/** The values a list of facets takes, by name. */
type ValuesOf<Facets extends readonly AnyFacet[]> = {
  [F in Facets[number] as F['name']]: F extends Facet<string, infer Value> ? Value : never;
};

/** A key attribute's value, as literal text and facets in turn: `TENANT#${decimal('tenantId')}`. */
export interface KeyTemplate<Values> {
  readonly facets: readonly AnyFacet[];
  /** The literal text before the first facet; all of it when the template has none. */
  readonly constantPrefix: string;
  /** The literal text around the facets: one more than there are facets. */
  readonly literals: readonly string[];
  /** The template with each facet written `{}`: the templates of one shape may name the same partition. */
  readonly shape: string;
  /**
   * The value, every facet given, as the key's `attribute` (partition or sort key: its limit, and so
   * whether a long folded facet is written as its digest: `writeKey`). A value still past the limit
   * is an error, never sent: no schema-valid request makes one (test/unit/key-limits.test.ts).
   */
  render(values: Values, attribute: KeyAttribute): string;
  /**
   * The value up to the first facet not given, for a Query's `begins_with`: the facets are taken in
   * their order, so one given after one left out is an error (it would be silently ignored). Written
   * as `render` writes the same facets, so it starts every value it names.
   */
  prefix(values: Partial<Values>, attribute: KeyAttribute): string;
  /**
   * The facets of a value this template renders, as written (strings), or undefined when it renders
   * no such value. Linear in the value's length, whatever the text (see `matchTemplate`).
   */
  match(value: string): Readonly<Record<string, string>> | undefined;
}

type AnyTemplate = KeyTemplate<never>;

/** Whether a facet's kind writes any text (the others write digits, or one of their letters). */
const writesAnyText = (facet: AnyFacet) => facet.kind === 'text' || facet.kind === 'folded' || facet.kind === 'name-key';

/**
 * Whether a facet's text is only compared, never read back from a key (a claim's folded login or
 * name key): such a facet may be written as a digest (`writeKey`). A `text` facet is read back (a
 * counter's name, a follow-up's kind, a resource's type), so a digest would lose it: its values are
 * bounded where they are made instead, and one past the limit is an error.
 */
const comparedOnly = (facet: AnyFacet) => facet.kind === 'folded' || facet.kind === 'name-key';

/**
 * How a compared-only facet's text (`comparedOnly`) is written where it would take its key past the
 * limit: `~SHA256:` and the SHA-256 of its UTF-8 bytes in base64url, 51 bytes however long the text.
 * Folding can make text many times longer than what was sent (U+FDFA, one character, folds to 18; a
 * 200-character login of it would be 6,600 bytes), so no bound on the characters sent bounds the
 * key. Equal texts give equal digests, so a claim still makes its value unique and still finds it,
 * with every route that names the value (`POST /tenant/login` and `GET /tenant/users?login=` as
 * `POST /tenant/users` does). Folded text never holds an upper-case ASCII letter (names.ts folds case;
 * test/unit/key-limits.test.ts checks every code point), so no value is written as a digest is: a
 * short name written as it is never takes a long one's claim.
 */
const digestOf = (text: string) => `~SHA256:${createHash('sha256').update(text, 'utf8').digest('base64url')}`;

/**
 * The key `literals` and `facets` write from `values` as `attribute`, through the first `count`
 * facets (each with the literal after it). A compared-only facet (`comparedOnly`) whose text, with
 * the key written before it and the literal after it, would pass the attribute's limit is written
 * as its digest instead (`digestOf`). That is decided facet by facet from the key's start, so a
 * prefix (`keyPrefix`) writes what the whole key does; and only where the key is already past the
 * limit with that facet's text, a key DynamoDB never stored: every key that could have been written
 * before stays as it was, and no stored claim changes.
 */
function writeKey(
  literals: readonly string[],
  facets: readonly AnyFacet[],
  values: Readonly<Record<string, unknown>>,
  attribute: KeyAttribute,
  count: number,
): string {
  let written = literals[0] ?? '';
  for (const [index, facet] of facets.slice(0, count).entries()) {
    const text = facet.write(values[facet.name] as never);
    const after = literals[index + 1] as string;
    const whole = `${written}${text}${after}`;
    written =
      comparedOnly(facet) && Buffer.byteLength(whole) > keyBytes[attribute] ? `${written}${digestOf(text)}${after}` : whole;
  }
  return written;
}

/** Whether a facet's written value is of its kind. */
function isWrittenAs(facet: AnyFacet, written: string): boolean {
  if (writesAnyText(facet)) return true;
  if (facet.kind === 'decimal') return /^[0-9]+$/.test(written);
  if (facet.kind === 'sortable') return /^[0-9]{12,}$/.test(written);
  return Object.values(facet.letters ?? {}).includes(written);
}

/**
 * The facets' written values in `value`, in order, without backtracking: literal text is found with
 * startsWith, indexOf and lastIndexOf, one search per facet, so the cost is linear in the value's length
 * (times the few facets and their short literals). A facet runs to the next literal, the last one to
 * the end. A facet that writes any text (`text`, `folded`, `name-key`) may hold the literal that
 * follows it (a follow-up's `kind`, a resource's `type`), so the facets after the first such one are
 * taken from the end instead, each running back to the literal before it, and the first takes what
 * is left between. That reads back every value a declaration renders, whatever its text: the only
 * text facet after the first of its key is an idempotency record's key hash, which is hex.
 */
function matchTemplate(literals: readonly string[], facets: readonly AnyFacet[], value: string): string[] | undefined {
  const first = literals[0] ?? '';
  const last = literals[facets.length] ?? '';
  if (facets.length === 0) return value === first ? [] : undefined;
  if (literals.slice(1, -1).includes('')) {
    throw new Error(`The key ${literals.join('{}')} has two facets with nothing between them: its values cannot be read back`);
  }
  if (value.length < first.length + last.length || !value.startsWith(first) || !value.endsWith(last)) return undefined;
  let start = first.length;
  let end = value.length - last.length;
  const freeAt = facets.findIndex(writesAnyText);
  const middle = freeAt === -1 ? facets.length - 1 : freeAt;
  const written: string[] = [];
  for (let index = 0; index < middle; index++) {
    const next = literals[index + 1] as string;
    const at = value.indexOf(next, start);
    if (at === -1 || at + next.length > end) return undefined;
    written[index] = value.slice(start, at);
    start = at + next.length;
  }
  for (let index = facets.length - 1; index > middle; index--) {
    const previous = literals[index] as string;
    if (end - previous.length < start) return undefined;
    const at = value.lastIndexOf(previous, end - previous.length);
    if (at < start) return undefined;
    written[index] = value.slice(at + previous.length, end);
    end = at;
  }
  written[middle] = value.slice(start, end);
  return facets.every((facet, index) => isWrittenAs(facet, written[index] as string)) ? written : undefined;
}

type TemplateValues<T> = T extends KeyTemplate<infer Values> ? Values : never;

/** A key template, written as a tagged template literal whose substitutions are facets. */
export function keyTemplate<const Facets extends readonly AnyFacet[]>(
  literals: TemplateStringsArray,
  ...facets: Facets
): KeyTemplate<ValuesOf<Facets>> {
  type Values = Record<string, unknown>;
  const valueOf = (values: Partial<Values>, facet: AnyFacet) => values[facet.name] as never;
  const shape = literals.join('{}');
  return {
    facets,
    constantPrefix: literals[0] ?? '',
    literals: [...literals],
    shape,
    render: (values: Values, attribute: KeyAttribute) => {
      const missing = facets.find((facet) => valueOf(values, facet) === undefined);
      if (missing) throw new Error(`The key ${shape} needs ${missing.name}`);
      const written = writeKey(literals, facets, values, attribute, facets.length);
      const bytes = Buffer.byteLength(written);
      if (bytes > keyBytes[attribute]) {
        throw new Error(
          `The key ${shape} is ${bytes} bytes: DynamoDB takes at most ${keyBytes[attribute]} in a ${attribute} key`,
        );
      }
      return written;
    },
    prefix: (values: Partial<Values>, attribute: KeyAttribute) => {
      const missing = facets.findIndex((facet) => valueOf(values, facet) === undefined);
      const count = missing === -1 ? facets.length : missing;
      const later = facets.slice(count + 1).find((next) => valueOf(values, next) !== undefined);
      if (later) throw new Error(`A prefix of ${shape} takes its facets in order: ${later.name} without ${facets[count]?.name}`);
      return writeKey(literals, facets, values, attribute, count);
    },
    match: (value: string) => {
      const written = matchTemplate(literals, facets, value);
      return written && Object.fromEntries(facets.map((facet, index) => [facet.name, written[index]]));
    },
  } as KeyTemplate<ValuesOf<Facets>>;
}

/** An entry of an entity's items in a global index. */
export interface IndexDeclaration {
  readonly pk: AnyTemplate;
  readonly sk: AnyTemplate;
  /** Which items have an entry, when not all of them (a sparse index). */
  readonly sparse?: string;
  /** The aggregate whose writes give and take the entry, when it is not the entity's own. */
  readonly writtenBy?: DeclaredEntity;
}

type IndexDeclarations = { readonly [Index in IndexName]?: IndexDeclaration };

/**
 * A uniqueness rule: an attribute unique within the claim's partition, kept by a claim item whose key
 * is made from the attribute's value (written as the claim's facet says: folded, a name key, exact),
 * put with `attribute_not_exists` in the holder's transaction.
 */
export interface UniqueClaim {
  readonly attribute: string;
  readonly claim: DeclaredEntity;
  /** The claim's attribute that names its holder. */
  readonly holder: string;
  /**
   * `never`: a claim found is taken. `when-holder-gone`: a claim left behind by a holder that no
   * longer exists may be taken over, conditional on it still naming that holder and the holder still
   * absent.
   */
  readonly takeover: 'never' | 'when-holder-gone';
  /**
   * How the claim goes when its holder is deleted or renamed. `never`: holders are neither.
   * `with-holder`: deleted (a rename moves it) in the holder's transaction. `while-held`: the same,
   * but only while it still names the holder, so a claim taken over stays with its new holder.
   */
  readonly release: 'never' | 'with-holder' | 'while-held';
}

/** How many of an entity there are, bounded in the transaction that creates one (the three mechanisms in use). */
export type CountRule =
  /** One `{ value }` item per name, changed and conditioned in each creation's and deletion's transaction (store/counts.ts). */
  | { readonly kind: 'quota-count'; readonly item: DeclaredEntity; readonly name: string }
  /** An item of its own, `{ value }`, started and conditioned by the entity's creations (the agents' `AGENTCOUNT`). */
  | { readonly kind: 'own-count'; readonly item: DeclaredEntity }
  /**
   * An attribute of the parent's record, advanced with a condition on its maximum (a template's
   * `latestVersion`). The parent is named through a function: its own declaration names this entity
   * (what its deletion leaves), so it is declared after it.
   */
  | { readonly kind: 'parent-attribute'; readonly parent: () => DeclaredEntity; readonly attribute: string };

/** What an item's deletion leaves, and the follow-up, written in the deleting transaction, that sweeps it. */
export interface Sweep {
  readonly followUp: FollowUpKind;
  readonly leaves: readonly DeclaredEntity[];
}

export interface EntityDeclaration {
  /** The name it is declared under in entity-declarations.ts `entities`. */
  readonly name: string;
  /** What the item is, in a few words: its row of the data model in docs/architecture.md (tools/entity-docs.ts). */
  readonly description?: string;
  readonly key: { readonly pk: AnyTemplate; readonly sk: AnyTemplate };
  readonly indexes?: IndexDeclarations;
  /** Index entries an earlier version gave these items: read, never written, until stored data migrates. */
  readonly legacyIndexes?: IndexDeclarations;
  /** Set on an entity only an earlier version wrote: what replaced it. Read, never written. */
  readonly legacy?: string;
  readonly unique?: readonly UniqueClaim[];
  readonly count?: CountRule;
  readonly sweep?: Sweep;
}

/** What every entity answers, whatever its facets. */
export interface DeclaredEntity {
  readonly name: string;
  readonly declaration: EntityDeclaration;
  /** Every facet of its key and index entries. */
  readonly facets: readonly AnyFacet[];
}

type KeyValues<D extends EntityDeclaration> = TemplateValues<D['key']['pk']> & TemplateValues<D['key']['sk']>;
type IndexesOf<Declared> = Declared extends IndexDeclarations ? Declared : Record<never, never>;
type UnionToIntersection<U> = (U extends unknown ? (value: U) => void : never) extends (value: infer I) => void ? I : never;
type IndexValues<Declared> = Declared extends IndexDeclaration
  ? TemplateValues<Declared['pk']> & TemplateValues<Declared['sk']>
  : never;
type EntryValues<Indexes> = UnionToIntersection<{ [Index in keyof Indexes]-?: IndexValues<Indexes[Index]> }[keyof Indexes]>;
type GlobalIndex = (typeof tableDefinition.globalIndexes)[number];
type EntryAttributes<Index> = Extract<GlobalIndex, { indexName: Index }>['partitionKey' | 'sortKey'];
type IndexEntry<Indexes> = { [Attribute in EntryAttributes<keyof Indexes>]: string };

/** An entity's entry in one index, and what a Query of the index names. */
export interface IndexKeys<Index, PkValues, SkValues> {
  entry(values: PkValues & SkValues): IndexEntry<Record<Index & string, IndexDeclaration>>;
  partition(values: PkValues): string;
  /** The start of the entries' sort keys in their partition (facets in order, from none). */
  keyPrefix(values: Partial<SkValues>): string;
}

type IndexKeysOf<Indexes> = {
  readonly [Index in keyof Indexes]-?: NonNullable<Indexes[Index]> extends IndexDeclaration
    ? IndexKeys<Index, TemplateValues<NonNullable<Indexes[Index]>['pk']>, TemplateValues<NonNullable<Indexes[Index]>['sk']>>
    : never;
};

/** Every facet an entity's items take: their key's and their index entries'. */
export type FacetValues<E> =
  E extends Entity<infer D>
    ? KeyValues<D> & EntryValues<IndexesOf<D['indexes']>> & EntryValues<IndexesOf<D['legacyIndexes']>>
    : never;

export interface Entity<D extends EntityDeclaration> extends DeclaredEntity {
  readonly declaration: D;
  /** The item's primary key. */
  key(values: KeyValues<D>): { pk: string; sk: string };
  /** Its partition key: the item collection it sits in. */
  partition(values: TemplateValues<D['key']['pk']>): string;
  /** The start of its partition keys, for telling them apart from other entities'. */
  partitionPrefix(values: Partial<TemplateValues<D['key']['pk']>>): string;
  /** The start of its sort keys in its partition, for a Query's `begins_with` (facets in order, from none). */
  keyPrefix(values: Partial<TemplateValues<D['key']['sk']>>): string;
  /** Its entry in each index it declares, for the item written with one. */
  indexEntry(values: EntryValues<IndexesOf<D['indexes']>>): IndexEntry<IndexesOf<D['indexes']>>;
  readonly indexes: IndexKeysOf<IndexesOf<D['indexes']>>;
  readonly legacyIndexes: IndexKeysOf<IndexesOf<D['legacyIndexes']>>;
}

function indexKeys(declared: IndexDeclarations | undefined) {
  return Object.fromEntries(
    Object.entries(declared ?? {}).map(([index, { pk, sk }]) => {
      const { partitionKey, sortKey } = tableDefinition.globalIndexes.find(({ indexName }) => indexName === index) as GlobalIndex;
      const keys: IndexKeys<string, never, never> = {
        entry: (values) => ({ [partitionKey]: pk.render(values, 'partition'), [sortKey]: sk.render(values, 'sort') }) as never,
        partition: (values) => pk.render(values, 'partition'),
        keyPrefix: (values) => sk.prefix(values, 'sort'),
      };
      return [index, keys];
    }),
  );
}

/** An entity, from its declaration. */
export function entity<const D extends EntityDeclaration>(declaration: D): Entity<D> {
  const { pk, sk } = declaration.key;
  const templates = [declaration.indexes, declaration.legacyIndexes].flatMap((declared) =>
    Object.values(declared ?? {}).flatMap((index) => [index.pk, index.sk]),
  );
  const facets = [...new Map([pk, sk, ...templates].flatMap((each) => each.facets).map((facet) => [facet.name, facet])).values()];
  const indexes = indexKeys(declaration.indexes);
  return {
    name: declaration.name,
    declaration,
    facets,
    key: (values) => ({ pk: pk.render(values as never, 'partition'), sk: sk.render(values as never, 'sort') }),
    partition: (values) => pk.render(values as never, 'partition'),
    partitionPrefix: (values) => pk.prefix(values as never, 'partition'),
    keyPrefix: (values) => sk.prefix(values as never, 'sort'),
    indexEntry: (values) => Object.assign({}, ...Object.values(indexes).map((index) => index.entry(values as never))),
    indexes: indexes as never,
    legacyIndexes: indexKeys(declaration.legacyIndexes) as never,
  };
}

/**
 * The one entity of `entities` whose key templates read the item's key, or undefined when none does.
 * Two that both read it are a declaration bug (a Query of one could read the other's items): an error.
 */
export function entityOf<E extends DeclaredEntity>(item: { pk: string; sk: string }, entities: readonly E[]): E | undefined {
  const matching = entities.filter(({ declaration: { key } }) => key.pk.match(item.pk) && key.sk.match(item.sk));
  if (matching.length > 1) {
    throw new Error(`The item ${item.pk} / ${item.sk} reads as ${matching.map(({ name }) => name).join(' and ')}`);
  }
  return matching[0];
}

/**
 * Entities whose items share a partition and are read together with one Query of a sort key prefix
 * (ElectroDB's collections): the longest prefix their sort keys' literal starts have in common.
 */
export interface Collection {
  readonly name: string;
  readonly members: readonly DeclaredEntity[];
  /** The partition template its members share. */
  readonly pk: AnyTemplate;
  readonly keyPrefix: string;
}

export function collection(name: string, members: readonly DeclaredEntity[]): Collection {
  const [first, ...others] = members.map((member) => member.declaration.key);
  if (!first || others.some((key) => key.pk.shape !== first.pk.shape)) {
    throw new Error(`The collection ${name} needs members that share one partition`);
  }
  const keyPrefix = others.reduce((common, key) => {
    let length = 0;
    while (length < common.length && common[length] === key.sk.constantPrefix[length]) length++;
    return common.slice(0, length);
  }, first.sk.constantPrefix);
  return { name, members, pk: first.pk, keyPrefix };
}
