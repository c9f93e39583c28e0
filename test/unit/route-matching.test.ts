import { expect, test } from 'vitest';
import type { Route } from '#functions/routes.ts';
import { matchRoute } from '#functions/core/api/route-matching.ts';

const route = (method: Route['method'], path: string): Route => ({
  method,
  path,
  handler: path,
  auth: [],
  table: 'none',
  summary: '',
  docs: { description: '' },
});
const table = [
  route('GET', '/tenants'),
  route('POST', '/tenants/{id}/token'),
  route('POST', '/tenants/delete'),
  route('POST', '/tenants/{id}'),
];

test('literal segments win over parameters, as API Gateway picks the most specific route', () => {
  expect(matchRoute('POST', '/tenants/delete', table)?.route.path).toBe('/tenants/delete');
  expect(matchRoute('POST', '/tenants/42', table)).toMatchObject({
    route: { path: '/tenants/{id}' },
    pathParameters: { id: '42' },
  });
});

test('parameters are URL-decoded and must not be empty', () => {
  expect(matchRoute('POST', '/tenants/a%20b/token', table)?.pathParameters).toEqual({ id: 'a b' });
  expect(matchRoute('POST', '/tenants//token', table)).toBeUndefined();
  expect(matchRoute('POST', '/tenants/%E0%A4%A/token', table)).toBeUndefined();
});

test('method, length and literals must all match', () => {
  expect(matchRoute('DELETE', '/tenants', table)).toBeUndefined();
  expect(matchRoute('GET', '/tenants/1', table)).toBeUndefined();
  expect(matchRoute('GET', '/tenant', table)).toBeUndefined();
});
