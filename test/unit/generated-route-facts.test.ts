import { readFileSync } from 'node:fs';
import { expect, test } from 'vitest';
import { routeFacts } from '#functions/core/api/route-facts.generated.ts';
import { routeKey, routes, unmatchedRoute } from '#functions/routes.ts';
import { generateRouteFactsModule, routeFactsFile } from '#tools/route-facts.ts';

test('the committed route facts are generated from the current route table (run `npm run generate` if not)', async () => {
  expect(readFileSync(routeFactsFile, 'utf8')).toBe(await generateRouteFactsModule());
});

test('every route has its facts, and they are its row without the summary, the docs or the stack facts', () => {
  // The $default route (what no row matches) has its facts too: no auth.
  expect(Object.keys(routeFacts).sort()).toEqual([...routes.map(routeKey), unmatchedRoute.routeKey].sort());
  expect(routeFacts[unmatchedRoute.routeKey]).toEqual({ auth: [] });
  const createTenant = routes.find((route) => routeKey(route) === 'POST /tenants');
  expect(createTenant?.summary).toBeTruthy();
  expect(routeFacts['POST /tenants']).toEqual({
    auth: createTenant?.auth,
    body: createTenant?.body,
    idempotent: true,
    audit: { resource: 'tenant' },
  });
  // A paginated route reads limit and cursor, then its own filters: its facts say so, without the descriptions.
  expect(routeFacts['GET /tenants']?.query?.map(({ name }) => name)).toEqual(['limit', 'cursor', 'nome', 'ativo']);
  expect(routeFacts['GET /tenants']?.query?.[0]).toEqual({ name: 'limit', schema: expect.objectContaining({ type: 'integer' }) });
});
