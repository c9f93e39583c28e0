/**
 * Every key the declarations write stays within DynamoDB's limits (entities.ts `keyBytes`: a
 * partition key at most 2048 bytes of UTF-8, a sort key 1024, an index's the same), whatever a
 * schema lets a request send. The class behind the finding: a folded facet (a login, a template's
 * name) grows under folding (U+FDFA, one character, is 18 once folded), so a 200-character login
 * made a 6,606-byte claim key and three routes answered 500. A compared-only facet past the limit is
 * written as its digest (entities.ts `writeKey`); a `text` facet is bounded where its values are made.
 *
 * Generated from the declarations: every template of every entity (its key, its index entries,
 * earlier ones included) is written from the worst value of each of its facets, and a text facet
 * with no known bound fails the test until it is given one.
 */
import fc from 'fast-check';
import { describe, expect, test } from 'vitest';
import createAgentSchema from '#functions/core/api/validators/create-agent.cjs';
import createUserSchema from '#functions/core/api/validators/create-user.cjs';
import bundleSchema from '#functions/core/api/validators/template-bundle.cjs';
import { type SchemaModule, validateBody } from '#functions/core/api/validation.ts';
import { foldedText, nameKey } from '#functions/core/names.ts';
import { outcomes } from '#functions/core/rollouts/rollout-repository.ts';
import type { DeclaredEntity, Facet, KeyAttribute, KeyTemplate } from '#functions/core/store/entities.ts';
import { keyBytes } from '#functions/core/store/entities.ts';
import { entities, userLogin } from '#functions/core/store/entity-declarations.ts';
import { resourceTypes } from '#functions/core/templates/tenant-resources.ts';
import { routeKey, routes } from '#functions/routes.ts';
import text from '#schemas/text.schema.json' with { type: 'json' };
import { anyText } from '#test/support/any-text.ts';
import { expectAtMost, expectNoMatch, expectSame } from '#test/support/loop-expect.ts';

type AnyFacet = Facet<string, never>;
type AnyTemplate = KeyTemplate<never>;

const bytes = (value: string) => Buffer.byteLength(value);
const longest = (values: readonly string[]) => values.reduce((a, b) => (bytes(b) > bytes(a) ? b : a), '');
const codePoints = function* () {
  for (let point = 0; point <= 0x10ffff; point++) if (point < 0xd800 || point > 0xdfff) yield String.fromCodePoint(point);
};

/**
 * Every code point folded, once (a name key is the folded text with its spaces collapsed: never
 * longer, never another letter): the one that grows most, and those whose folded text holds an
 * upper-case ASCII letter (a digest's mark).
 */
const folding = (() => {
  let worst = { character: '', bytes: 0 };
  const holdingUpper: string[] = [];
  for (const character of codePoints()) {
    const folded = foldedText(character);
    if (bytes(folded) > worst.bytes) worst = { character, bytes: bytes(folded) };
    if (/[A-Z]/.test(folded)) holdingUpper.push(character);
  }
  return { worst, holdingUpper };
})();
const { worst } = folding;

/** The most characters a login or a display name (a template's, a group's, a tenant's `nome`) may have. */
const longestName = Math.max(text.$defs.login.maxLength, text.$defs.displayName.maxLength);

/**
 * Characters that stress a folded facet: the one that grows most, one of each UTF-8 width that folds
 * to itself, one that folds to a longer form (`ß`, `ss`), one to a shorter (`ﬁ`, `fi`) and a square
 * word (U+3316, six characters once folded).
 */
const stressing = [worst.character, 'a', 'é', '中', '\u{20000}', 'ß', '\ufb01', '\u3316'];

/**
 * The longest value each `text` facet takes, and why: none takes request text of unbounded size.
 * A `text` facet is written as it is, so its bound is where its values are made.
 */
const maxId = Number.MAX_SAFE_INTEGER;
const longestText: Readonly<Record<string, string>> = {
  // Id counters (`template`, `user`, a resource type's) and quota counts (`GROUPPERMBYTES`): names
  // the code writes, none near 64.
  name: 'x'.repeat(64),
  // An agent's name: create-agent's pattern takes 1 to 64 of [a-z0-9._-] (checked below).
  nome: 'a'.repeat(64),
  // SHA-256 digests in hex.
  tokenHash: 'f'.repeat(64),
  sessionHash: 'f'.repeat(64),
  keyHash: 'f'.repeat(64),
  type: longest(resourceTypes),
  outcome: longest(outcomes),
  // An SQS MessageDeduplicationId: at most 128 ASCII characters, or SQS refuses the message first.
  deduplicationId: 'x'.repeat(128),
  // ISO instants: the latest a Date holds is the longest.
  slot: new Date(8.64e15).toISOString(),
  nextFireAt: new Date(8.64e15).toISOString(),
  // An audit record's time; an idempotent request's key (idempotency.ts: 32 hex digits of a SHA-256).
  at: new Date(8.64e15).toISOString(),
  requestKey: 'f'.repeat(32),
  // A follow-up's kind and a migration set's name: names the code writes.
  kind: 'x'.repeat(64),
  set: 'x'.repeat(64),
  // The caller (principals.ts principalScope, the longest an agent's) and its route's key.
  scope: `agent:${maxId}:${maxId}:${longest(routes.map(routeKey))}`,
};

/** The worst value of each facet of `template`, its folded ones (if any) written from `folded`. */
function worstValues(template: AnyTemplate, folded: string): Record<string, unknown> {
  return Object.fromEntries(
    template.facets.map((facet: AnyFacet) => {
      if (facet.kind === 'decimal' || facet.kind === 'sortable') return [facet.name, maxId];
      if (facet.kind === 'letter') return [facet.name, longest(Object.keys(facet.letters ?? {}))];
      if (facet.kind === 'text') return [facet.name, longestText[facet.name]];
      return [facet.name, folded];
    }),
  );
}

/** Every template of every declaration, with the attribute it writes. */
const everyTemplate = Object.values<DeclaredEntity>(entities).flatMap(({ name, declaration }) => [
  { where: `${name} pk`, template: declaration.key.pk, attribute: 'partition' as KeyAttribute },
  { where: `${name} sk`, template: declaration.key.sk, attribute: 'sort' as KeyAttribute },
  ...[declaration.indexes, declaration.legacyIndexes].flatMap((indexes) =>
    Object.entries(indexes ?? {}).flatMap(([index, { pk, sk }]) => [
      { where: `${name} ${index}pk`, template: pk, attribute: 'partition' as KeyAttribute },
      { where: `${name} ${index}sk`, template: sk, attribute: 'sort' as KeyAttribute },
    ]),
  ),
]);
const compared = (template: AnyTemplate) => template.facets.some((facet) => facet.kind === 'folded' || facet.kind === 'name-key');

/** `validateBody` as an answer: whether the schema takes the body. */
const takes = (schema: SchemaModule, body: unknown) => {
  try {
    validateBody(schema, body);
    return true;
  } catch {
    return false;
  }
};

describe('the worst input a schema takes', () => {
  test(`${JSON.stringify(worst.character)} grows most when folded: ${worst.bytes} bytes from one character`, () => {
    expect(worst.character).toBe('\ufdfa');
    expect(foldedText(worst.character)).toHaveLength(18);
    // The schemas count characters (code points), not bytes: the worst a login or name can fold to.
    expect(bytes(foldedText(worst.character.repeat(longestName)))).toBe(worst.bytes * longestName);
  });

  test('logins and names are bounded in characters, and take the most-growing character up to the bound', () => {
    const login = worst.character.repeat(text.$defs.login.maxLength);
    expect(takes(createUserSchema, { login, nome: 'x' })).toBe(true);
    expect(takes(createUserSchema, { login: `${login}${worst.character}`, nome: 'x' })).toBe(false);
    const nome = worst.character.repeat(text.$defs.displayName.maxLength);
    expect(takes(bundleSchema, { nome })).toBe(true);
    expect(takes(bundleSchema, { nome: `${nome}${worst.character}` })).toBe(false);
  });

  test("an agent's name, written as it is, is at most 64 ASCII characters", () => {
    expect(takes(createAgentSchema, { nome: longestText.nome })).toBe(true);
    expect(takes(createAgentSchema, { nome: `${longestText.nome}a` })).toBe(false);
  });

  test('folding grows text at most linearly: never past the worst character times the characters sent', () => {
    fc.assert(
      fc.property(anyText({ maxLength: 300 }), (sent) => {
        const characters = [...sent].length;
        expectAtMost(bytes(foldedText(sent)), worst.bytes * characters);
        expectAtMost(bytes(nameKey(sent)), worst.bytes * characters);
      }),
      { seed: 7, numRuns: 200 },
    );
  });
});

describe('every key the declarations write stays within its limit', () => {
  test('every text facet has a known bound', () => {
    const unbounded = everyTemplate.flatMap(({ where, template }) =>
      template.facets
        .filter((facet) => facet.kind === 'text' && longestText[facet.name] === undefined)
        .map((facet) => `${where}: ${facet.name}`),
    );
    expect(unbounded).toEqual([]);
  });

  test.each(everyTemplate.map((each) => [each.where, each] as const))('%s', (_where, { template, attribute }) => {
    const limit = keyBytes[attribute];
    // Folded facets of every length up to past the limit, from the characters that stress them; and
    // the longest a schema takes, and ten times that.
    const lengths = compared(template)
      ? [...Array.from({ length: limit + 2 }, (_, index) => index + 1), longestName, longestName * 10]
      : [1];
    for (const character of compared(template) ? stressing : ['x']) {
      for (const length of lengths) {
        const values = worstValues(template, character.repeat(length));
        const key = template.render(values as never, attribute);
        expectAtMost(bytes(key), limit, `${JSON.stringify(character)} × ${length}`);
        // A prefix writes what the key does, so a Query's `begins_with` finds it.
        expectSame(template.prefix(values as never, attribute), key);
      }
    }
  });
});

describe('a long folded value is written as its digest, and only where it could never have been stored', () => {
  const claimKey = (login: string) => userLogin.key({ tenantId: 7, login }).sk;
  const room = keyBytes.sort - bytes('LOGIN#');

  test('a key that fits is written as before, byte for byte; one past the limit as a fixed-length digest', () => {
    expect(claimKey('a'.repeat(room))).toBe(`LOGIN#${'a'.repeat(room)}`);
    expect(claimKey('A'.repeat(room))).toBe(`LOGIN#${'a'.repeat(room)}`);
    expect(claimKey('a'.repeat(room + 1))).toMatch(/^LOGIN#~SHA256:[A-Za-z0-9_-]{43}$/);
    expect(claimKey(worst.character.repeat(text.$defs.login.maxLength))).toMatch(/^LOGIN#~SHA256:[A-Za-z0-9_-]{43}$/);
  });

  test('values that fold alike share a digest; values that do not, never', () => {
    const long = worst.character.repeat(text.$defs.login.maxLength - 1);
    expect(claimKey(`${long}A`)).toBe(claimKey(`${long}a`));
    expect(claimKey(`${long}\uff41`)).toBe(claimKey(`${long}a`));
    expect(claimKey(`${long}a\u200d`)).toBe(claimKey(`${long}a`));
    expect(claimKey(`${long}b`)).not.toBe(claimKey(`${long}a`));
    expect(claimKey(`${long}\ufb01`)).toBe(claimKey(`${long}fi`));
  });

  test('no folded text holds an upper-case ASCII letter, so no value written as it is reads as a digest', () => {
    const upper = /[A-Z]/;
    expect(folding.holdingUpper).toEqual([]);
    fc.assert(
      fc.property(anyText({ maxLength: 40 }), (sent) => {
        expectNoMatch(foldedText(sent), upper);
        expectNoMatch(nameKey(sent), upper);
      }),
      { seed: 11, numRuns: 1000 },
    );
  });
});
