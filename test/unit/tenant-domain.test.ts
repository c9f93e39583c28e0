import { expect, test } from 'vitest';
import { tenantDomain } from '#functions/core/tenants/tenants.ts';

test.each([
  ['Acme', 7, 'acme-7.bi.example.com'],
  ['São Paulo Ltda.', 12, 'sao-paulo-ltda-12.bi.example.com'],
  ['  --Hello__World--  ', 3, 'hello-world-3.bi.example.com'],
  ['日本', 5, 'tenant-5.bi.example.com'],
  ['!!!', 9, 'tenant-9.bi.example.com'],
])('%s with id %i is %s', (nome, id, expected) => {
  expect(tenantDomain(nome, id, 'bi.example.com')).toBe(expected);
});

test('long names are cut so the label stays a valid DNS label', () => {
  const domain = tenantDomain('a'.repeat(300), 9007199254740991, 'bi.example.com');
  const label = domain.split('.')[0] ?? '';
  expect(label.length).toBeLessThanOrEqual(63);
  expect(label).toMatch(/^[a-z0-9]([a-z0-9-]*[a-z0-9])?$/);
});

test('a name whose cut ends on a separator does not leave a dangling hyphen', () => {
  expect(tenantDomain(`${'a'.repeat(39)} b`, 1, 'x.io')).toBe(`${'a'.repeat(39)}-1.x.io`);
});
