import { existsSync } from 'node:fs';
import { expect, test } from 'vitest';
import { routeKey, routes } from '#functions/routes.ts';
import { requestSchemas } from '#schemas/index.ts';

test('every route key is unique', () => {
  const keys = routes.map(routeKey);
  expect(new Set(keys).size).toBe(keys.length);
});

test.each(routes.map((route) => [routeKey(route), route] as const))(
  '%s has a handler module and its schema',
  async (_key, route) => {
    const file = new URL(`../../functions/http/${route.handler}.ts`, import.meta.url);
    expect(existsSync(file)).toBe(true);
    const module = (await import(file.href)) as { handler?: unknown };
    expect(typeof module.handler).toBe('function');
    // That the handler validates with this schema is checked over HTTP (test/e2e/route-table.test.ts).
    if (route.body) expect(requestSchemas[route.body]).toBeDefined();
    // A route that authenticates reads the token from the table.
    if (route.auth.length > 0) expect(route.table).not.toBe('none');
    if (route.idempotent) expect([route.method, route.table]).toEqual(['POST', 'readWrite']);
  },
);

test.each(routes.map((route) => [routeKey(route), route] as const))(
  '%s: a route that writes says what its audit records name (or why it records none); one that does not, nothing',
  (_key, route) => {
    if (route.table !== 'readWrite') {
      expect(route.audit).toBeUndefined();
      return;
    }
    expect(route.audit).toBeDefined();
    const fact = route.audit;
    if (!fact || !('resource' in fact)) {
      expect((fact as { unaudited: string }).unaudited.length).toBeGreaterThan(20);
      return;
    }
    // A route anyone may call has no principal to record.
    expect(route.auth.length).toBeGreaterThan(0);
    if (typeof fact.idParameter === 'string') expect(route.path).toContain(`{${fact.idParameter}}`);
    if (fact.bodyId !== undefined) {
      const schema = route.body ? (requestSchemas[route.body] as { properties?: Record<string, unknown> }) : undefined;
      expect(Object.keys(schema?.properties ?? {})).toContain(fact.bodyId);
    }
  },
);
