import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, test } from 'vitest';
import { validatorsDirectory } from '#bin/generate-validators.ts';
import createGroupSchema from '#functions/core/api/validators/create-group.cjs';
import createTenantSchema from '#functions/core/api/validators/create-tenant.cjs';
import createUserSchema from '#functions/core/api/validators/create-user.cjs';
import loginSchema from '#functions/core/api/validators/login.cjs';
import scheduleSchema from '#functions/core/api/validators/schedule.v2.cjs';
import bundleSchema from '#functions/core/api/validators/template-bundle.cjs';
import { type SchemaModule, schemaErrors, validateBody } from '#functions/core/api/validation.ts';
import { errorBody, maxEchoedLength, maxListedErrors, ServiceError } from '#functions/core/errors.ts';

function fieldErrors(body: unknown) {
  try {
    validateBody(createTenantSchema, body);
  } catch (error) {
    if (error instanceof ServiceError) return { status: error.status, message: error.message, errors: error.errors };
    throw error;
  }
  throw new Error('expected the body to be refused');
}

describe('request body validation', () => {
  test('a valid body passes through unchanged', () => {
    const body = { nome: 'Acme', ativo: false, templateId: 3 };
    expect(validateBody(createTenantSchema, body)).toBe(body);
  });

  test('a missing body is its own clear error', () => {
    expect(fieldErrors(undefined)).toMatchObject({ status: 400, message: 'Request body is required' });
  });

  test('every failing field is listed by JSON pointer with a readable message', () => {
    const result = fieldErrors({ ativo: 'yes', templateId: 1.5, extra: 1 });
    expect(result.status).toBe(400);
    expect(result.errors).toEqual(
      expect.arrayContaining([
        { location: 'body', pointer: '/nome', message: 'is required' },
        { location: 'body', pointer: '/ativo', message: 'must be boolean' },
        { location: 'body', pointer: '/templateId', message: 'must be integer' },
        { location: 'body', pointer: '/extra', message: 'is not allowed' },
      ]),
    );
    expect(result.errors).toHaveLength(4);
    expect(result.message).toMatch(/^Invalid request body: \/\w+ /);
  });

  test('an empty or over-long nome is refused', () => {
    expect(fieldErrors({ nome: '', ativo: true }).errors).toEqual([
      { location: 'body', pointer: '/nome', message: 'must not be empty' },
    ]);
    expect(fieldErrors({ nome: 'x'.repeat(201), ativo: true }).errors).toEqual([
      { location: 'body', pointer: '/nome', message: 'must be at most 200 characters long' },
    ]);
  });

  test('a body that is not an object is refused', () => {
    expect(fieldErrors([1, 2]).errors).toEqual([{ location: 'body', pointer: '', message: 'must be object' }]);
  });
});

describe('keys of the body that are names of object methods', () => {
  test('are unknown keys like any other: no message comes from Object.prototype', () => {
    for (const name of Object.getOwnPropertyNames(Object.prototype).filter((each) => each !== '__proto__')) {
      const result = fieldErrors(JSON.parse(`{"nome":"Acme","ativo":true,${JSON.stringify(name)}:1}`));
      expect(result.message, name).toBe(`Invalid request body: /${name} is not allowed`);
      expect(result.errors, name).toEqual([{ location: 'body', pointer: `/${name}`, message: 'is not allowed' }]);
    }
  });
});

describe('names, logins and labels (schemas/text.schema.json)', () => {
  const invisible = {
    NUL: '\u0000',
    tab: '\t',
    newline: '\n',
    escape: '\u001b',
    DEL: '\u007f',
    'C1 control': '\u0085',
    'right-to-left override': '\u202e',
    'left-to-right isolate': '\u2066',
    'zero-width space': '\u200b',
    'byte order mark': '\ufeff',
    'soft hyphen': '\u00ad',
    'lone high surrogate': '\ud800',
    'lone low surrogate': '\udc00',
  };

  test.each(Object.entries(invisible))('a %s in a name or a login is 400 at the field', (_what, character) => {
    const nome = fieldErrors({ nome: `Ac${character}me`, ativo: true });
    expect(nome.errors).toEqual([{ location: 'body', pointer: '/nome', message: expect.stringMatching(/control characters/) }]);
    const user = (() => {
      try {
        validateBody(createUserSchema, { login: `ana${character}@acme.com`, nome: 'Ana' });
      } catch (error) {
        if (error instanceof ServiceError) return error.errors;
      }
      throw new Error('expected the login to be refused');
    })();
    expect(user).toEqual([{ location: 'body', pointer: '/login', message: expect.stringMatching(/control characters/) }]);
  });

  test('letters of every script, emoji and the joiners that scripts need are fine', () => {
    for (const nome of ['Acme', 'José Ñúñez', 'Ελένη', '東京', 'مهدی‌زاده', 'नमस्ते', '👨‍👩‍👧 family', 'a b']) {
      expect(validateBody(createTenantSchema, { nome, ativo: true }).nome).toBe(nome);
    }
  });

  test('every name, login and label of every request schema follows the rule', () => {
    const bodies: Array<[SchemaModule, unknown, string]> = [
      [createGroupSchema, { nome: 'G\u202e' }, '/nome'],
      [loginSchema, { login: 'a\u200b' }, '/login'],
      [scheduleSchema, { header: { id: 1, labels: { 'k\u200b': 'v' } }, body: validScheduleBody }, '/header/labels/k\u200b'],
      [scheduleSchema, { header: { id: 1, labels: { k: 'v\u2066' } }, body: validScheduleBody }, '/header/labels/k'],
      [scheduleSchema, { header: { id: 1 }, body: { ...validScheduleBody, nome: 'S\u202e' } }, '/body/nome'],
      [bundleSchema, { nome: 'T\u0085' }, '/nome'],
    ];
    for (const [schema, body, pointer] of bodies) {
      expect(
        schemaErrors(schema, body).map((error) => error.pointer),
        `${schema.schemaName} ${pointer}`,
      ).toContain(pointer);
    }
  });
});

const validScheduleBody = { nome: 'S', ativo: true, timezone: 'UTC', flows: [], triggers: [] };

describe('the cost of refusing a hostile body', () => {
  test('no generated validator copies its error list per failing reference (quadratic: 30k bad triggers took 12 s)', () => {
    for (const file of readdirSync(validatorsDirectory).filter((name) => name.endsWith('.cjs'))) {
      expect(readFileSync(join(validatorsDirectory, file), 'utf8'), file).not.toContain('.concat(');
    }
  });

  test('a body with an error per item gets all of them counted, and an answer of bounded size', () => {
    const triggers = Array.from({ length: 20_000 }, () => ({ type: 'Hour' }));
    const errors = schemaErrors(scheduleSchema, { header: { id: 1 }, body: { ...validScheduleBody, triggers } });
    expect(errors.length).toBeGreaterThan(20_000);
    const answer = errorBody('validation_failed', 'Invalid', 'request', errors);
    expect(answer.errors).toHaveLength(maxListedErrors);
    expect(answer.errorCount).toBe(errors.length);
    expect(JSON.stringify(answer).length).toBeLessThan(50_000);
  });

  test('a message or a pointer quoting a huge key is cut', () => {
    const key = 'k'.repeat(500_000);
    const result = fieldErrors({ nome: 'Acme', ativo: true, [key]: 1 });
    const answer = errorBody('validation_failed', result.message, 'request', result.errors);
    expect(answer.message.length).toBeLessThanOrEqual(maxEchoedLength);
    expect(answer.errors[0]?.pointer.length).toBeLessThanOrEqual(maxEchoedLength);
    expect(answer.errors[0]?.pointer.endsWith('…')).toBe(true);
    expect(answer.errorCount).toBe(1);
  });
});
