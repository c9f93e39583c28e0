import { describe, expect, test } from 'vitest';
import { maxBodyBytes, parseJsonBody } from '../../functions/core/api/request-body.ts';
import { ServiceError } from '../../functions/core/errors.ts';

const json = (body: string, contentType = 'application/json') => ({
  body,
  isBase64Encoded: false,
  headers: { 'content-type': contentType },
});

function failure(event: Parameters<typeof parseJsonBody>[0]): { status: number; code: string } {
  try {
    parseJsonBody(event);
  } catch (error) {
    if (error instanceof ServiceError) return { status: error.status, code: error.code };
    throw error;
  }
  throw new Error('expected a failure');
}

describe('JSON request bodies', () => {
  test('no body is undefined, not an error (the schema decides whether one is required)', () => {
    expect(parseJsonBody({ body: undefined, isBase64Encoded: false, headers: {} })).toBeUndefined();
    expect(parseJsonBody({ body: '', isBase64Encoded: false, headers: {} })).toBeUndefined();
  });

  test('JSON with a charset or a +json media type is accepted', () => {
    expect(parseJsonBody(json('{"a":1}', 'application/json; charset=utf-8'))).toEqual({ a: 1 });
    expect(parseJsonBody(json('[1]', 'application/merge-patch+json'))).toEqual([1]);
  });

  test('base64-encoded bodies are decoded', () => {
    const body = Buffer.from('{"a":"é"}').toString('base64');
    expect(parseJsonBody({ body, isBase64Encoded: true, headers: { 'content-type': 'application/json' } })).toEqual({ a: 'é' });
  });

  test('a body over 1 MB is 413, before anything else is looked at', () => {
    expect(failure(json('x'.repeat(maxBodyBytes + 1), 'text/plain'))).toEqual({ status: 413, code: 'payload_too_large' });
    expect(() => parseJsonBody(json(`"${'x'.repeat(maxBodyBytes - 2)}"`))).not.toThrow();
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
    expect(() => parseJsonBody(json(`${'['.repeat(32)}${']'.repeat(32)}`))).not.toThrow();
  });

  test('a __proto__ key anywhere is 400', () => {
    expect(failure(json('{"__proto__":{"admin":true}}'))).toEqual({ status: 400, code: 'malformed_body' });
    expect(failure(json('{"a":[{"b":{"__proto__":1}}]}'))).toEqual({ status: 400, code: 'malformed_body' });
  });
});
