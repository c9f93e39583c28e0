import fc from 'fast-check';
import { describe, expect, test } from 'vitest';
import { maxBodyBytes, parseBody } from '#functions/core/api/request-body.ts';
import { maxYamlTokens, parseYamlBody } from '#functions/core/api/yaml-body.ts';
import { ServiceError } from '#functions/core/errors.ts';

const json = (body: string, contentType = 'application/json') => ({
  body,
  isBase64Encoded: false,
  headers: { 'content-type': contentType },
});

function failure(event: Parameters<typeof parseBody>[0]): { status: number; code: string } {
  const { status, code } = refusal(event);
  return { status, code };
}

function refusal(event: Parameters<typeof parseBody>[0], options: Parameters<typeof parseBody>[1] = {}): ServiceError {
  try {
    parseBody(event, options);
  } catch (error) {
    if (error instanceof ServiceError) return error;
    throw error;
  }
  throw new Error('expected a failure');
}

describe('JSON request bodies', () => {
  test('no body is undefined, not an error (the schema decides whether one is required)', () => {
    expect(parseBody({ body: undefined, isBase64Encoded: false, headers: {} })).toBeUndefined();
    expect(parseBody({ body: '', isBase64Encoded: false, headers: {} })).toBeUndefined();
  });

  test('JSON with a charset or a +json media type is accepted', () => {
    expect(parseBody(json('{"a":1}', 'application/json; charset=utf-8'))).toEqual({ a: 1 });
    expect(parseBody(json('[1]', 'application/merge-patch+json'))).toEqual([1]);
  });

  test('base64-encoded bodies are decoded', () => {
    const body = Buffer.from('{"a":"é"}').toString('base64');
    expect(parseBody({ body, isBase64Encoded: true, headers: { 'content-type': 'application/json' } })).toEqual({ a: 'é' });
  });

  test('a body over 1 MB is 413, before anything else is looked at', () => {
    expect(failure(json('x'.repeat(maxBodyBytes + 1), 'text/plain'))).toEqual({ status: 413, code: 'payload_too_large' });
    expect(() => parseBody(json(`"${'x'.repeat(maxBodyBytes - 2)}"`))).not.toThrow();
  });

  test('a JSON body of exactly the bound, of every kind of value, passes the size it has as JSON', () => {
    const items = Array.from({ length: 15_000 }, (_, index) => ({ n: index, b: index % 2 === 0, z: null, s: 'é"', a: [1, {}] }));
    const shell = JSON.stringify({ items, pad: '' });
    const body = JSON.stringify({ items, pad: 'x'.repeat(maxBodyBytes - Buffer.byteLength(shell)) });
    expect(Buffer.byteLength(body)).toBe(maxBodyBytes);
    expect(() => parseBody(json(body))).not.toThrow();
  });

  test('a wrong or missing content type is 415', () => {
    expect(failure(json('{}', 'text/plain'))).toEqual({ status: 415, code: 'unsupported_media_type' });
    expect(failure({ body: '{}', isBase64Encoded: false, headers: {} })).toEqual({ status: 415, code: 'unsupported_media_type' });
  });

  test('malformed JSON is 400', () => {
    expect(failure(json('{"nome": '))).toEqual({ status: 400, code: 'malformed_json' });
  });

  test('invalid UTF-8 is 400', () => {
    const body = Buffer.from([0x7b, 0x22, 0x61, 0x22, 0x3a, 0x22, 0xc3, 0x28, 0x22, 0x7d]).toString('base64');
    expect(failure({ body, isBase64Encoded: true, headers: { 'content-type': 'application/json' } })).toEqual({
      status: 400,
      code: 'malformed_body',
    });
  });

  test('deep nesting is 400, also far beyond what a recursive walk would survive', () => {
    expect(failure(json(`${'['.repeat(33)}${']'.repeat(33)}`))).toEqual({ status: 400, code: 'malformed_body' });
    expect(failure(json(`${'['.repeat(200_000)}${']'.repeat(200_000)}`))).toEqual({ status: 400, code: 'malformed_body' });
    expect(() => parseBody(json(`${'['.repeat(32)}${']'.repeat(32)}`))).not.toThrow();
  });

  test('a __proto__ key anywhere is 400', () => {
    expect(failure(json('{"__proto__":{"admin":true}}'))).toEqual({ status: 400, code: 'malformed_body' });
    expect(failure(json('{"a":[{"b":{"__proto__":1}}]}'))).toEqual({ status: 400, code: 'malformed_body' });
  });

  test('a charset other than UTF-8 is 415, whatever the bytes', () => {
    for (const contentType of [
      'application/json; charset=utf-16',
      'application/json;charset=UTF-16LE',
      'application/json; charset="iso-8859-1"',
      'application/json; Charset=latin1',
    ]) {
      expect(failure(json('{"a":1}', contentType)), contentType).toEqual({ status: 415, code: 'unsupported_media_type' });
    }
    for (const contentType of [
      'application/json; charset=utf-8',
      'application/json; charset="UTF-8"',
      'application/json;charset=utf8',
    ]) {
      expect(parseBody(json('{"a":1}', contentType)), contentType).toEqual({ a: 1 });
    }
  });

  test('NUL and lone surrogates, in any string or key at any depth, are 400 at their pointer', () => {
    for (const [body, pointer] of [
      ['{"nome":"a\\u0000b"}', '/nome'],
      ['{"nome":"\\ud800"}', '/nome'],
      ['{"nome":"x\\udc00y"}', '/nome'],
      ['{"a":[1,{"b/c":"\\ud83d"}]}', '/a/1/b~1c'],
      ['{"a":{"k\\u0000":1}}', '/a/k\u0000'],
      ['"\\u0000"', ''],
    ] as const) {
      const error = refusal(json(body));
      expect([error.status, error.code], body).toEqual([400, 'malformed_body']);
      expect(
        error.errors.map((each) => each.pointer),
        body,
      ).toEqual([pointer]);
    }
    // A surrogate pair is one character (an emoji), not a lone surrogate.
    expect(parseBody(json('{"nome":"\\ud83d\\ude00 ok"}'))).toEqual({ nome: '😀 ok' });
  });

  test('a constructor key holding an object is 400 at its pointer; holding anything else it is a plain key', () => {
    for (const body of ['{"constructor":{"name":"Set"}}', '{"a":[{"constructor":{}}]}']) {
      const error = refusal(json(body));
      expect([error.status, error.code], body).toEqual([400, 'malformed_body']);
      expect(error.errors[0]?.pointer, body).toMatch(/\/constructor$/);
    }
    expect(parseBody(json('{"constructor":"x","toString":1,"valueOf":[{"constructor":null}]}'))).toEqual(
      JSON.parse('{"constructor":"x","toString":1,"valueOf":[{"constructor":null}]}'),
    );
  });
});

describe('YAML request bodies (routes that accept them)', () => {
  const yaml = (body: string) => ({ body, isBase64Encoded: false, headers: { 'content-type': 'application/yaml' } });
  const yamlFailure = (body: string) => {
    try {
      parseBody(yaml(body), { yaml: parseYamlBody });
    } catch (error) {
      if (error instanceof ServiceError) return { status: error.status, code: error.code };
      throw error;
    }
    throw new Error('expected a failure');
  };

  test('YAML parses to the same value as the equivalent JSON', () => {
    const parsed = parseBody(
      yaml('nome: Retail\ntables:\n  - key: orders\n    columns: [{column_name: id, data_type: int, label: Id}]\n'),
      { yaml: parseYamlBody },
    );
    expect(parsed).toEqual({
      nome: 'Retail',
      tables: [{ key: 'orders', columns: [{ column_name: 'id', data_type: 'int', label: 'Id' }] }],
    });
  });

  test('core schema: dates and yes/no stay strings, as YAML 1.2 says', () => {
    expect(parseBody(yaml('a: 2026-01-01\nb: yes\nc: "07:30"'), { yaml: parseYamlBody })).toEqual({
      a: '2026-01-01',
      b: 'yes',
      c: '07:30',
    });
  });

  test('YAML is refused (415) on a route that takes only JSON', () => {
    expect(failure(yaml('a: 1'))).toEqual({ status: 415, code: 'unsupported_media_type' });
  });

  const keysOf = (count: number) =>
    Array.from({ length: count }, (_, index) => `k${index.toString(36)}: ${index % 10}`).join('\n');
  const yamlRefusal = (body: string) => refusal(yaml(body), { yaml: parseYamlBody });

  test('a key repeated in a mapping, at any depth, is 400 naming the key; the same key in other mappings is fine', () => {
    for (const [body, key] of [
      ['a: 1\nb: 2\na: 3', 'a'],
      ['a:\n  b:\n    - c: 1\n      d: 2\n      c: 3', 'c'],
      ['list:\n  - {x: 1, y: 2, x: 3}', 'x'],
      [`${keysOf(5000)}\nk2: again`, 'k2'],
      // `1` and `"1"` become the same property: the later would silently replace the earlier.
      ['1: a\n"1": b', '1'],
      ['? null\n: a\n"": b', ''],
    ] as const) {
      const error = yamlRefusal(body);
      expect([error.status, error.code], body).toEqual([400, 'malformed_yaml']);
      expect(error.message, body).toContain(`the key ${JSON.stringify(key)} appears twice`);
    }
    expect(parseBody(yaml('a: {k: 1}\nb: {k: 2}\nc: [{k: 3}, {k: 4}]'), { yaml: parseYamlBody })).toEqual({
      a: { k: 1 },
      b: { k: 2 },
      c: [{ k: 3 }, { k: 4 }],
    });
  });

  test('a list, a mapping or an alias as a key is 400: it has no property name', () => {
    for (const body of ['? [a, b]\n: 1', '? {a: 1}\n: 2', 'x: &k a\n*k : 1']) {
      expect(yamlRefusal(body).code, body).toBe('malformed_yaml');
    }
  });

  test('a YAML body larger than the bound once its aliases are expanded is 413, though it was sent small', () => {
    const row = `[${Array.from({ length: 8000 }, (_, index) => `"c${index}"`).join(', ')}]`;
    const body = `row: &row ${row}\ntables: [${Array(20).fill('*row').join(', ')}]\n`;
    expect(Buffer.byteLength(body)).toBeLessThan(100_000);
    const error = yamlRefusal(body);
    expect([error.status, error.code]).toEqual([413, 'payload_too_large']);
    expect(error.message).toContain('as JSON');
  });

  test('many distinct keys parse; past the token bound the body is 413 and never reaches the slow part', () => {
    const many = keysOf(25_000);
    expect(Object.keys(parseBody(yaml(many), { yaml: parseYamlBody }) as object)).toHaveLength(25_000);
    // The issue's body: 116k keys in 1 MB took minutes with the library's own duplicate check.
    const huge = keysOf(116_000);
    expect(Buffer.byteLength(huge)).toBeLessThan(maxBodyBytes);
    const error = yamlRefusal(huge);
    expect([error.status, error.code]).toEqual([413, 'payload_too_large']);
    expect(error.message).toContain(`${maxYamlTokens} YAML tokens`);
    // Nesting goes through the same loop, not recursion.
    expect(yamlRefusal(`${'- '.repeat(5000)}x`).status).toBe(400);
  });

  test('custom tags, several documents, duplicate keys and syntax errors are 400', () => {
    for (const body of ['a: !!js/function "return 1"', 'a: !custom x', 'a: 1\n---\nb: 2', 'a: 1\na: 2', 'a: [1, 2']) {
      expect(yamlFailure(body)).toEqual({ status: 400, code: 'malformed_yaml' });
    }
  });

  test('alias expansion is bounded (billion laughs)', () => {
    const lines = ['a: &a [x, x, x, x, x, x, x, x, x, x]'];
    for (let level = 1; level < 9; level++) {
      const previous = String.fromCharCode(96 + level);
      const current = String.fromCharCode(97 + level);
      lines.push(`${current}: &${current} [${Array(10).fill(`*${previous}`).join(', ')}]`);
    }
    expect(yamlFailure(lines.join('\n'))).toEqual({ status: 400, code: 'malformed_yaml' });
  });

  test('a __proto__ key in YAML is 400 like in JSON', () => {
    expect(yamlFailure('__proto__:\n  admin: true')).toEqual({ status: 400, code: 'malformed_body' });
  });
});

/**
 * The classes behind three findings: a parser that hands the store something other than JSON data
 * (YAML's `!!set`, `!!omap`, `!!timestamp` made a Set, a Map, a Date: past the schema, which sees no
 * properties in them, and then a 500 or a silent `{}`), a number the store cannot hold (beyond
 * ±2^53: a 500 from the marshaller), and a body two readers read differently (a repeated name).
 * Each is checked for every position a generated body offers, not for one example.
 */
describe('a body is JSON data the store holds as sent, and reads one way', () => {
  const yamlEvent = (body: string) => ({ body, isBase64Encoded: false, headers: { 'content-type': 'application/yaml' } });
  /** A generated body, with the path of one of its containers and one of its leaves. */
  const accepted = (value: unknown) => {
    try {
      parseBody(json(JSON.stringify(value)));
      return true;
    } catch {
      return false;
    }
  };
  const bodies = fc.jsonValue({ maxDepth: 4 }).filter((value) => typeof value === 'object' && value !== null && accepted(value));
  const placesIn = (value: unknown): Array<Record<string, unknown> | unknown[]> => {
    const found: Array<Record<string, unknown> | unknown[]> = [];
    const pending = [value];
    while (pending.length > 0) {
      const node = pending.pop();
      if (typeof node === 'object' && node !== null) {
        found.push(node as Record<string, unknown>);
        pending.push(...Object.values(node));
      }
    }
    return found;
  };
  /** `body` with `value` put into its `at`-th container (under a new key, or appended). */
  const withValueAt = (body: unknown, at: number, value: string) => {
    const copy = structuredClone(body);
    const places = placesIn(copy);
    const place = places[at % places.length] as Record<string, unknown> | unknown[];
    const marker = '__value__';
    if (Array.isArray(place)) place.push(marker);
    else place['zz_injected'] = marker;
    return JSON.stringify(copy).replace(`"${marker}"`, value);
  };

  const unstorableNumbers = [
    '9007199254740992',
    '-9007199254740992',
    '1e16',
    '1e300',
    '1e308',
    '5e-324',
    '-1e-200',
    '12345678901234567890',
  ];
  const storableNumbers = ['9007199254740991', '-9007199254740991', '0', '-0', '0.1', '1e-130', '1.5e-100', '123456.789'];

  test('a number beyond ±(2^53 − 1), or a fraction below 1e-130, anywhere in a JSON or YAML body is 400 at its pointer', () => {
    fc.assert(
      fc.property(bodies, fc.nat(), fc.constantFrom(...unstorableNumbers), (body, at, number) => {
        const text = withValueAt(body, at, number);
        const error = refusal(json(text));
        expect({ status: error.status, code: error.code }).toEqual({ status: 400, code: 'malformed_body' });
        expect(error.message).toMatch(/number outside what the service stores exactly/);
        expect(refusal(yamlEvent(text), { yaml: parseYamlBody }).code).toBe('malformed_body');
      }),
      { seed: 17, numRuns: 200 },
    );
  });

  test('numbers the store holds exactly pass, wherever they are', () => {
    fc.assert(
      fc.property(bodies, fc.nat(), fc.constantFrom(...storableNumbers), (body, at, number) => {
        const text = withValueAt(body, at, number);
        expect(parseBody(json(text))).toEqual(JSON.parse(text));
      }),
      { seed: 18, numRuns: 200 },
    );
  });

  test("YAML's infinities and NaN are refused like unstorable numbers", () => {
    for (const text of ['a: .inf', 'a: -.Inf', 'a: .nan', 'a: [1, .NAN]']) {
      expect(refusal(yamlEvent(text), { yaml: parseYamlBody }).code, text).toBe('malformed_body');
    }
  });

  test('every YAML tag that would make something other than JSON data is refused, wherever it is', () => {
    const tagged = [
      '!!set {a, b}',
      '!!set {}',
      '!!omap [a: 1, b: 2]',
      '!!pairs [a: 1]',
      '!!timestamp 2001-01-01',
      '!!binary aGVsbG8=',
      '!!omap [__proto__: b]',
      '!<tag:yaml.org,2002:set> {a}',
      '!!map {a: 1}',
    ];
    fc.assert(
      fc.property(bodies, fc.nat(), fc.constantFrom(...tagged.slice(0, -1)), (body, at, value) => {
        const text = withValueAt(body, at, value);
        const error = refusal(yamlEvent(text), { yaml: parseYamlBody });
        expect(error.status).toBe(400);
      }),
      { seed: 19, numRuns: 200 },
    );
    // The core schema's own tags (a map tagged as a map) stay what they are.
    expect(parseBody(yamlEvent(`a: ${tagged.at(-1)}`), { yaml: parseYamlBody })).toEqual({ a: { a: 1 } });
  });

  test('whatever the parser makes, only JSON values reach the schema (a Map, a Set, a Date, bytes are 400)', () => {
    for (const value of [new Map([['a', 1]]), new Set(['a']), new Date(0), new Uint8Array(2), Object.create({ inherited: 1 })]) {
      const error = refusal(yamlEvent('x'), { yaml: () => ({ nested: [{ value }] }) });
      expect({ status: error.status, code: error.code, pointer: error.errors[0]?.pointer }).toEqual({
        status: 400,
        code: 'malformed_body',
        pointer: '/nested/0/value',
      });
    }
  });

  test('YAML nesting far past the bound is 400 without exhausting the stack, in block and in flow style', () => {
    for (const text of [
      '- '.repeat(5000) + '1',
      '['.repeat(3000) + ']'.repeat(3000),
      '{a: '.repeat(3000) + '1' + '}'.repeat(3000),
    ]) {
      const error = refusal(yamlEvent(text), { yaml: parseYamlBody });
      expect({ status: error.status, code: error.code }).toEqual({ status: 400, code: 'malformed_body' });
      expect(error.message).toMatch(/nests deeper than 32 levels/);
    }
  });

  test('a name repeated in one JSON object, at any depth and however it is escaped, is 400 at its pointer', () => {
    fc.assert(
      fc.property(bodies, fc.nat(), (body, at) => {
        const copy = structuredClone(body);
        const objects = placesIn(copy).filter((place) => !Array.isArray(place)) as Array<Record<string, unknown>>;
        fc.pre(objects.length > 0);
        const target = objects[at % objects.length] as Record<string, unknown>;
        target['dup'] = 1;
        // The same name again, spelled with an escape: JSON.parse would keep the second silently.
        const text = JSON.stringify(copy).replace('"dup":1', '"dup":1,"d\\u0075p":2');
        const error = refusal(json(text));
        expect({ status: error.status, code: error.code }).toEqual({ status: 400, code: 'malformed_body' });
        expect(error.errors[0]?.pointer).toMatch(/\/dup$/);
      }),
      { seed: 20, numRuns: 200 },
    );
  });

  test('the same name in different objects, and names that only look alike in strings, are fine', () => {
    const text = '{"a":{"x":1},"b":{"x":2},"c":["x","x",{"x":"\\"x\\":1"}],"d":"{\\"e\\":1,\\"e\\":2}","x":[{"x":1},{"x":2}]}';
    expect(parseBody(json(text))).toEqual(JSON.parse(text));
  });

  test('a Content-Type naming its charset twice is 415, whichever comes first', () => {
    for (const type of ['application/json;charset=utf-8;charset=utf-16', 'application/json; charset=utf-8; CHARSET=utf-8']) {
      expect(failure(json('{}', type))).toEqual({ status: 415, code: 'unsupported_media_type' });
    }
  });
});
