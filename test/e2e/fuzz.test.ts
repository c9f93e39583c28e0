/**
 * Generative fuzzing over the whole route table, through the twin. For every route: bodies made
 * from its JSON Schema and then broken (object-method and prototype names as keys at every depth,
 * tens of thousands of keys, deep nesting, odd Unicode, wrong types, numbers at the edges), as
 * JSON and, where the route takes it, as YAML; hostile path and query parameters too. Whatever is
 * sent: never a 5xx, an answer under 1 MB, and nothing stored on a 4xx. A request that runs past its
 * function's timeout is a 5xx too (the twin answers 500, as API Gateway does); how long answers take
 * is the bench's to measure (`npm run bench`), not a test's: on a loaded machine it says nothing.
 *
 * `npm test` runs it with a fixed seed and few runs per route. `npm run fuzz` runs longer with a
 * random seed it prints; replay a run with `FUZZ_SEED=<seed> FUZZ_RUNS=<runs> npm run fuzz`.
 */
import fc from 'fast-check';
import { stringify } from 'yaml';
import { beforeAll, describe, expect, test } from 'vitest';
import { type Route, routeKey, routes } from '#functions/routes.ts';
import { api } from '#test/support/api.ts';
import { type Party, party, pathParameterFor, snapshot, tokenFor } from '#test/support/party.ts';
import { arbitraryOf, type Hints } from '#test/support/schema-arbitrary.ts';

const seed = process.env.FUZZ_SEED === 'random' ? Date.now() % 2 ** 31 : Number(process.env.FUZZ_SEED ?? 2121);
const runs = Number(process.env.FUZZ_RUNS ?? 4);
if (process.env.FUZZ_SEED !== undefined) console.log(`fuzz: FUZZ_SEED=${seed} FUZZ_RUNS=${runs}`);

/** The properties' bound on an answer's size. */
const maxAnswerBytes = 1024 * 1024;

// ---------------------------------------------------------------- what is sent

const prototypeNames = [...Object.getOwnPropertyNames(Object.prototype), 'prototype', 'toJSON', 'then', 'length', 'name'];

const oddStrings = [
  '\ud800',
  'a\udc00b',
  '\u0000',
  'a\u0000b',
  '\u202eevil',
  '\u2066x\u2069',
  'zero\u200bwidth',
  '\ufeffbom',
  `e${'\u0301'.repeat(500)}`,
  '\u0085\u2028\u2029',
  '😀👨‍👩‍👧',
  '',
  ' ',
  'x'.repeat(70_000),
  '%00',
  '../../etc/passwd',
  '<script>alert(1)</script>',
  '${7*7}',
  'NaN',
  'Infinity',
  '-0',
];

const edgeNumbers = [1e308, -1e308, 5e-324, -0, 2 ** 53, 2 ** 53 + 2, -(2 ** 53), 2 ** 31, 2 ** 64, 1e21, 0.1, -1];

/** A value of any kind, for wrong types and for the values of injected keys. */
const anyValue: fc.Arbitrary<unknown> = fc.oneof(
  fc.constantFrom(...oddStrings),
  fc.constantFrom(...edgeNumbers),
  fc.constantFrom(true, false, null, [], {}, [null], { name: 'Set' }, { name: 'String' }, { name: 'Uint8Array' }),
  fc.anything({ maxDepth: 2 }),
);

type Json = unknown;

/** Every object and array inside `value`, with `value` first (iteratively: values may nest deeply). */
function containers(value: Json): Array<Record<string, Json> | Json[]> {
  const found: Array<Record<string, Json> | Json[]> = [];
  const pending = [value];
  while (pending.length > 0) {
    const node = pending.pop();
    if (typeof node !== 'object' || node === null) continue;
    found.push(node as Record<string, Json> | Json[]);
    pending.push(...Object.values(node).slice(0, 50));
  }
  return found;
}

const setOwn = (target: object, key: string, value: Json) =>
  Object.defineProperty(target, key, { value, enumerable: true, writable: true, configurable: true });

/** `value` (a copy), with `change` applied to the leaves `select` picks. */
function replaceLeaves(value: Json, select: (leaf: Json) => boolean, change: (leaf: Json) => Json): Json {
  const copy = structuredClone(value);
  const root = { root: copy };
  for (const container of containers(root)) {
    for (const [key, leaf] of Object.entries(container)) if (select(leaf)) setOwn(container, key, change(leaf));
  }
  return root.root;
}

/** Ways to break a body, each from a body the schema (roughly) accepts. */
function mutations(valid: fc.Arbitrary<Json>): fc.Arbitrary<Json> {
  return fc.oneof(
    { weight: 3, arbitrary: valid },
    {
      // Object-method and prototype names as keys, at any depth: mostly below the top, whose keys
      // every schema fixes, so that they reach the maps that take any key (and then the store),
      // and mostly with plain values, which those maps take.
      weight: 5,
      arbitrary: fc
        .tuple(
          valid,
          fc.array(
            fc.tuple(
              fc.nat(),
              fc.constantFrom(...prototypeNames),
              fc.oneof(
                { weight: 3, arbitrary: fc.constantFrom('x', 1, true) },
                // Numbers the store cannot hold, where maps take any value (a 500 once).
                { weight: 1, arbitrary: fc.constantFrom(...edgeNumbers) },
                anyValue,
              ),
            ),
            {
              minLength: 1,
              maxLength: 4,
            },
          ),
        )
        .map(([body, injections]) => {
          const copy = { root: structuredClone(body) };
          const objects = containers(copy).filter((each) => !Array.isArray(each));
          // objects[0] is the wrapper, objects[1] the body itself; deeper ones first when there are any.
          const targets = objects.length > 2 ? objects.slice(2) : objects.slice(1);
          for (const [at, key, value] of injections)
            if (targets.length > 0) setOwn(targets[at % targets.length] as object, key, value);
          return copy.root;
        }),
    },
    {
      weight: 2,
      arbitrary: fc.tuple(valid, fc.constantFrom(...oddStrings)).map(([body, odd]) =>
        replaceLeaves(
          body,
          (leaf) => typeof leaf === 'string',
          () => odd,
        ),
      ),
    },
    {
      weight: 2,
      arbitrary: fc.tuple(valid, fc.constantFrom(...edgeNumbers)).map(([body, edge]) =>
        replaceLeaves(
          body,
          (leaf) => typeof leaf === 'number',
          () => edge,
        ),
      ),
    },
    {
      // Wrong types: every leaf of one kind becomes a value of another.
      weight: 2,
      arbitrary: fc.tuple(valid, fc.constantFrom('string', 'number', 'boolean', 'object'), anyValue).map(([body, kind, other]) =>
        replaceLeaves(
          body,
          (leaf) => typeof leaf === kind,
          () => other,
        ),
      ),
    },
    {
      weight: 1,
      arbitrary: fc.tuple(valid, fc.integer({ min: 30, max: 1000 }), fc.boolean()).map(([body, depth, inArrays]) => {
        let nested: Json = body;
        for (let level = 0; level < depth; level++) nested = inArrays ? [nested] : { a: nested };
        return nested;
      }),
    },
    {
      // Tens of thousands of keys (up to about 1 MB of JSON), next to a valid body's own.
      weight: 1,
      arbitrary: fc.tuple(valid, fc.integer({ min: 1000, max: 90_000 })).map(([body, count]) => {
        const flood: Record<string, Json> = {};
        for (let index = 0; index < count; index++) flood[`k${index}`] = index % 10;
        return typeof body === 'object' && body !== null && !Array.isArray(body) ? { ...flood, ...body } : flood;
      }),
    },
  );
}

interface Sent {
  rawBody?: string;
  contentType?: string;
}

/** YAML text a YAML route must survive: the body as YAML, and what only YAML can carry. */
function yamlBodies(body: fc.Arbitrary<Json>): fc.Arbitrary<Sent> {
  const keys = (count: number) => Array.from({ length: count }, (_, index) => `k${index.toString(36)}: ${index % 10}`);
  return fc
    .oneof(
      {
        weight: 4,
        arbitrary: body
          // Small enough for the YAML writer, which recurses: the deep and huge bodies come as text below.
          .filter((value) => (JSON.stringify(value)?.length ?? 0) < 200_000 && containers(value).length < 300)
          .map((value) => ({ rawBody: stringify(value, { aliasDuplicateObjects: false }) })),
      },
      {
        weight: 2,
        arbitrary: fc
          .constantFrom(
            keys(116_000).join('\n'),
            `${keys(3000).join('\n')}\nk5: again`,
            `${'- '.repeat(3000)}x`,
            `${'  '.repeat(0)}${Array.from({ length: 40 }, (_, level) => `${'  '.repeat(level)}a${level}:`).join('\n')} x`,
            [
              'a: &a [x, x, x, x, x, x, x, x, x]',
              'b: &b [*a, *a, *a, *a, *a, *a, *a, *a, *a]',
              'c: [*b, *b, *b, *b, *b, *b, *b, *b, *b]',
            ].join('\n'),
            '? [complex, key]\n: 1',
            'a: !!js/function "return 1"\nb: !custom x',
            '__proto__: {admin: true}\nconstructor: {name: Set}',
            'a: 1\n---\nb: 2',
            '#'.repeat(1000) + '\n'.repeat(100_000),
            '1: a\n"1": b',
            // YAML 1.1 tags the library would turn into a Set, a Map, a Date or bytes.
            'a: !!set {x, y}\nb: !!set {}',
            'a: !!omap [x: 1, y: 2]',
            'a: !!timestamp 2001-01-01\nb: !!binary aGVsbG8=',
            'a: .inf\nb: .nan',
            `${'['.repeat(3000)}${']'.repeat(3000)}`,
          )
          .map((rawBody) => ({ rawBody })),
      },
    )
    .map((sent) => ({ ...sent, contentType: 'application/yaml' }));
}

const hostileSegments = [
  '0',
  '-1',
  '1.5',
  '1e3',
  '007',
  '99999999999999999999999',
  ' 1',
  'constructor',
  '__proto__',
  'toString',
  'valueOf',
  '..',
  '%2e%2e',
  '%00',
  '%ZZ',
  encodeURIComponent('\u202e1'),
  encodeURIComponent('😀'),
  encodeURIComponent('a/b'),
  'x'.repeat(3000),
  'ten_xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx',
];

/** A route's path: mostly its party's real ids, sometimes hostile segments. */
function pathOf(route: Route, owner: Party): fc.Arbitrary<string> {
  const names = [...route.path.matchAll(/\{(\w+)\}/g)].map((match) => match[1] as string);
  const values = names.map((name) =>
    fc.oneof(
      { weight: 3, arbitrary: fc.constant(encodeURIComponent(pathParameterFor(route, name, owner))) },
      { weight: 1, arbitrary: fc.constantFrom(...hostileSegments) },
    ),
  );
  return fc.tuple(...values).map((chosen) => {
    let index = 0;
    return route.path.replace(/\{\w+\}/g, () => chosen[index++] as string);
  });
}

const cursorOf = (value: Json) => Buffer.from(JSON.stringify(value)).toString('base64url');
const hostileQueryValues = [
  '',
  '0',
  '-1',
  '101',
  '1e2',
  '0x10',
  '9'.repeat(40),
  'x',
  '%00',
  encodeURIComponent('\u202e'),
  Buffer.from('{"__proto__":{"polluted":true}}').toString('base64url'),
  cursorOf({ constructor: 'x', pk: 'TENANT#1', sk: 'TENANT' }),
  cursorOf({ pk: 'CLIENT#1', sk: 'CLIENT', gsi1pk: 'CLIENTS', gsi1sk: '1' }),
  cursorOf('x'.repeat(600)),
  Buffer.from('/.//evil.com').toString('base64'),
  Buffer.from('/%2e//evil.com').toString('base64url'),
];

/** The query string: the route's own parameters (hostile values) and names it does not know. */
function queryOf(route: Route): fc.Arbitrary<string> {
  const names = [...(route.paginated ? ['limit', 'cursor'] : []), ...(route.query ?? []).map((parameter) => parameter.name)];
  const pair = fc.tuple(
    fc.constantFrom(...names, 'constructor', '__proto__', 'toString', 'hasOwnProperty'),
    fc.constantFrom(...hostileQueryValues),
  );
  return fc.oneof(
    { weight: 1, arbitrary: fc.constant('') },
    {
      weight: 2,
      arbitrary: fc
        .array(pair, { minLength: 1, maxLength: 4 })
        .map((pairs) => `?${pairs.map(([name, value]) => `${name}=${value}`).join('&')}`),
    },
  );
}

/** Ids of the party's own resources, where bodies name them, so that more bodies get past the 404s to the store. */
const hintsOf = (owner: Party): Hints => ({
  templateId: fc.constant(owner.templateId),
  flow_etl_id: fc.constantFrom(...owner.flows),
  flowId: fc.constantFrom(...owner.flows),
  tokenId: fc.constant(1),
  tableId: fc.constantFrom(...owner.tables),
  tables: fc.subarray(owner.tables),
  owners: fc.constant([owner.ids.user]),
});

/** The body a route is sent: its schema's values broken, as JSON or YAML; hostile text for routes without one. */
function bodyOf(route: Route): fc.Arbitrary<Sent> {
  if (route.method === 'GET') return fc.constant({});
  if (!route.body) {
    return fc.oneof(
      { weight: 3, arbitrary: fc.constant({}) },
      {
        weight: 1,
        arbitrary: anyValue.map((value) => ({ rawBody: JSON.stringify(value) ?? 'null', contentType: 'application/json' })),
      },
    );
  }
  const body = mutations(arbitraryOf(route.body, hintsOf(owner)));
  const json = fc.oneof(
    {
      weight: 8,
      arbitrary: body.map((value): Sent => ({ rawBody: JSON.stringify(value) ?? 'null', contentType: 'application/json' })),
    },
    {
      // A name twice in one object (JSON.parse keeps the last; other readers the first).
      weight: 1,
      arbitrary: body
        .filter((value) => typeof value === 'object' && value !== null && !Array.isArray(value) && Object.keys(value).length > 0)
        .map((value): Sent => {
          const text = JSON.stringify(value);
          const [name] = Object.keys(value as object);
          return { rawBody: `${text.slice(0, -1)},${JSON.stringify(name)}:null}`, contentType: 'application/json' };
        }),
    },
  );
  const charset = body.map((value): Sent => ({
    rawBody: JSON.stringify(value) ?? 'null',
    contentType: 'application/json; charset=utf-16',
  }));
  return route.yaml
    ? fc.oneof({ weight: 4, arbitrary: json }, { weight: 4, arbitrary: yamlBodies(body) }, { weight: 1, arbitrary: charset })
    : fc.oneof({ weight: 8, arbitrary: json }, { weight: 1, arbitrary: charset });
}

// ---------------------------------------------------------------- the order routes are fuzzed in

/**
 * Read-only routes first; routes that end what the others need (the party's tokens, its tenant)
 * last, so that every route meets a party that still works.
 */
function disruption(route: Route): number {
  const key = routeKey(route);
  if (key === 'DELETE /tenants' || key === 'POST /tenants/delete') return 6;
  if (key === 'POST /tenants/{id}/token') return 5;
  if (key.endsWith('/deactivate')) return 4;
  if (key.endsWith('/activate')) return 4.5;
  if (key.endsWith('/token') || key.endsWith('/secret')) return 3;
  if (route.method === 'DELETE') return 2;
  return route.method === 'GET' ? 0 : 1;
}
const fuzzedRoutes = [...routes].sort((a, b) => disruption(a) - disruption(b));

// ---------------------------------------------------------------- the properties

let owner: Party;
beforeAll(async () => {
  owner = await party(0);
}, 60_000);

describe('fuzzing every route', () => {
  test.each(fuzzedRoutes.map((route, index) => [routeKey(route), route, index] as const))(
    '%s: no 5xx, an answer under 1 MB, nothing stored on a 4xx',
    async (key, route, index) => {
      await fc.assert(
        fc.asyncProperty(pathOf(route, owner), queryOf(route), bodyOf(route), async (path, query, sent) => {
          const before = route.method === 'GET' ? undefined : await snapshot(owner);
          const answer = await api(route.method, `${path}${query}`, {
            token: tokenFor(route, owner),
            ...(sent.rawBody === undefined ? {} : { rawBody: sent.rawBody }),
            headers: sent.contentType ? { 'content-type': sent.contentType } : {},
          });
          const what = `${key} ${path}${query.slice(0, 100)} ${(sent.rawBody ?? '').slice(0, 100)}`;
          expect(answer.status, `${what}: ${JSON.stringify(answer.body).slice(0, 300)}`).toBeLessThan(500);
          const size = Buffer.byteLength(typeof answer.body === 'string' ? answer.body : JSON.stringify(answer.body));
          expect(size, what).toBeLessThan(maxAnswerBytes);
          if (before && answer.status >= 400)
            expect(await snapshot(owner), `${what}: stored on a ${answer.status}`).toEqual(before);
        }),
        { seed: seed + index, numRuns: runs, endOnFailure: true },
      );
    },
    Math.max(30_000, runs * 8_000),
  );
});
