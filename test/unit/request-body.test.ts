import { describe, expect, test } from 'vitest';
import { maxBodyBytes, parseBody } from '#functions/core/api/request-body.ts';
import { parseYamlBody } from '#functions/core/api/yaml-body.ts';
import { ServiceError } from '#functions/core/errors.ts';

const json = (body: string, contentType = 'application/json') => ({
  body,
  isBase64Encoded: false,
  headers: { 'content-type': contentType },
});

function failure(event: Parameters<typeof parseBody>[0]): { status: number; code: string } {
  try {
    parseBody(event);
  } catch (error) {
    if (error instanceof ServiceError) return { status: error.status, code: error.code };
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
