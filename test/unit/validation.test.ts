import { describe, expect, test } from 'vitest';
import createTenantSchema from '#functions/core/api/validators/create-tenant.cjs';
import { validateBody } from '#functions/core/api/validation.ts';
import { ServiceError } from '#functions/core/errors.ts';

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
