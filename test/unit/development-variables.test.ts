import { describe, expect, test } from 'vitest';
import createTenantSchema from '#functions/core/api/validators/create-tenant.cjs';
import { validateBody } from '#functions/core/api/validation.ts';
import { ServiceError } from '#functions/core/errors.ts';
import { normalizeDevelopmentVariables } from '#functions/core/tenants/tenants.ts';

const withVariables = (development_variables: unknown) => ({ nome: 'Acme', ativo: true, development_variables });

function rejection(run: () => unknown): ServiceError {
  try {
    run();
  } catch (error) {
    if (error instanceof ServiceError) return error;
    throw error;
  }
  throw new Error('expected a rejection');
}

/** What POST /tenants does with the field: schema first, then the normalizer. */
const accept = (value: unknown) =>
  normalizeDevelopmentVariables(validateBody(createTenantSchema, withVariables(value)).development_variables);

describe('development_variables', () => {
  test('the object format is stored as it is', () => {
    expect(accept({ DB_HOST: 'db.local', PORT: 5432, DEBUG: false })).toEqual({ DB_HOST: 'db.local', PORT: 5432, DEBUG: false });
  });

  test('the array format becomes the same object', () => {
    const fromArray = accept([
      { key: 'DB_HOST', value: 'db.local' },
      { key: 'PORT', value: 5432 },
      { key: 'DEBUG', value: false },
    ]);
    expect(fromArray).toEqual(accept({ DB_HOST: 'db.local', PORT: 5432, DEBUG: false }));
  });

  test('empty forms and absence give no variables', () => {
    expect(accept({})).toEqual({});
    expect(accept([])).toEqual({});
    expect(normalizeDevelopmentVariables(undefined)).toEqual({});
  });

  const malformed: Array<[string, unknown, string]> = [
    ['a string', 'DB_HOST=db', '/development_variables'],
    ['a number', 42, '/development_variables'],
    ['null', null, '/development_variables'],
    ['an array of strings', ['DB_HOST'], '/development_variables/0'],
    ['an item without value', [{ key: 'DB_HOST' }], '/development_variables/0/value'],
    ['an item without key', [{ value: 'x' }], '/development_variables/0/key'],
    ['an item with an empty key', [{ key: '', value: 'x' }], '/development_variables/0/key'],
    ['an item with an extra property', [{ key: 'A', value: 'x', secret: true }], '/development_variables/0/secret'],
    ['a nested object value', { DB: { host: 'db' } }, '/development_variables/DB'],
    ['an array value', { HOSTS: ['a', 'b'] }, '/development_variables/HOSTS'],
    ['a null value in the array format', [{ key: 'A', value: null }], '/development_variables/0/value'],
    ['an object item value', [{ key: 'A', value: { x: 1 } }], '/development_variables/0/value'],
  ];

  test.each(malformed)('%s is refused with the spec message and a pointer', (_name, value, pointer) => {
    const error = rejection(() => accept(value));
    expect(error.status).toBe(400);
    expect(error.message.startsWith('Invalid development_variables format')).toBe(true);
    expect(error.errors.map((field) => field.pointer)).toContain(pointer);
  });

  test('a duplicate key in the array format is refused, naming the second occurrence', () => {
    const error = rejection(() =>
      accept([
        { key: 'A', value: '1' },
        { key: 'B', value: '2' },
        { key: 'A', value: '3' },
      ]),
    );
    expect(error.message).toBe('Invalid development_variables format: duplicate key "A"');
    expect(error.errors).toEqual([
      { location: 'body', pointer: '/development_variables/2/key', message: 'duplicates an earlier key' },
    ]);
  });

  test('the spec message wins over other invalid fields in the same body', () => {
    const error = rejection(() => validateBody(createTenantSchema, { nome: '', ativo: 'yes', development_variables: 'x' }));
    expect(error.message.startsWith('Invalid development_variables format')).toBe(true);
    expect(error.errors.map((field) => field.pointer).sort()).toEqual(['/ativo', '/development_variables', '/nome']);
  });

  test('bounds: at most 64 KiB as a whole', () => {
    const large = Object.fromEntries(Array.from({ length: 20 }, (_, index) => [`V${index}`, 'x'.repeat(4000)]));
    const error = rejection(() => accept(large));
    expect(error.message).toBe('Invalid development_variables format: larger than 65536 bytes as JSON');
    const fits = Object.fromEntries(Array.from({ length: 15 }, (_, index) => [`V${index}`, 'x'.repeat(4000)]));
    expect(Object.keys(accept(fits))).toHaveLength(15);
  });

  test('bounds: at most 200 variables, names up to 128 characters', () => {
    const many = Object.fromEntries(Array.from({ length: 201 }, (_, index) => [`V${index}`, index]));
    expect(rejection(() => accept(many)).status).toBe(400);
    expect(rejection(() => accept({ ['x'.repeat(129)]: 1 })).status).toBe(400);
  });
});
