/**
 * What a row of the route table states about its handler's behaviour, checked over real HTTP for
 * every route, so that the table (and the API description made from it) cannot drift from the
 * handlers: which body schema validates the body (none, for a row without one), and which query
 * parameters are read. httpHandler refuses to run (a 500) a handler that disagrees with its row: a
 * body validator or YAML parser other than the row's, an integer query parameter the row does not
 * declare.
 */
import { beforeAll, expect, test } from 'vitest';
import { type QueryParameter, queryParametersOf, type Route, routeKey, routes } from '#functions/routes.ts';
import { api, expectErrorEnvelope, newClient, newTenant } from '#test/support/api.ts';
import { agentToken } from '#test/support/templates.ts';

const tokens: Record<string, string> = {};
beforeAll(async () => {
  const client = await newClient();
  const tenant = await newTenant(client.token);
  Object.assign(tokens, { client: client.token, tenant: tenant.token, agent: await agentToken(tenant.token) });
});

/** A request path for the route: ids of records that need not exist, a file the docs route serves. */
const pathOf = (route: Route, id = '1') =>
  route.path.replace(/\{(\w+)\}/g, (_, name: string) => ({ asset: 'docs.js', token: 'not-a-token' })[name] ?? id);
const tokenOf = (route: Route) => (route.auth[0] ? tokens[route.auth[0]] : undefined);

const withKeys = (list: readonly Route[]) => list.map((route) => [routeKey(route), route] as const);

test.each(withKeys(routes.filter((route) => route.body)))(
  '%s validates its body with the schema its row names',
  async (_key, route) => {
    // No request schema takes an array: the row's schema refuses it (400) where a disagreeing handler would fail (500).
    const error = expectErrorEnvelope(await api(route.method, pathOf(route), { token: tokenOf(route), body: [] }), 400);
    expect(error.code).toBe('validation_failed');
    expect(error.errors[0]).toMatchObject({ location: 'body' });
  },
);

const isInteger = (parameter: QueryParameter) => 'type' in parameter.schema && parameter.schema.type === 'integer';
const integerParameterNames = [
  ...new Set(
    routes.flatMap((route) =>
      queryParametersOf(route)
        .filter(isInteger)
        .map((parameter) => parameter.name),
    ),
  ),
];

/** The documentation's static files take no parameters and ignore a query string (a cache-buster is no mistake). */
const staticFiles = new Set(['GET /openapi.json', 'GET /docs/{asset}']);

test.each(withKeys(routes.filter((route) => route.method === 'GET' && !staticFiles.has(routeKey(route)))))(
  '%s reads exactly the integer query parameters its row declares (limit, for a paginated list), and refuses others',
  async (_key, route) => {
    const declared = queryParametersOf(route)
      .filter(isInteger)
      .map((parameter) => parameter.name);
    for (const name of integerParameterNames) {
      // Not an integer: refused where the parameter is read.
      const answer = await api('GET', `${pathOf(route)}?${name}=-1`, { token: tokenOf(route) });
      if (declared.includes(name)) {
        expect(expectErrorEnvelope(answer, 400).errors).toEqual([
          expect.objectContaining({ location: 'query', pointer: `/${name}` }),
        ]);
      } else {
        // Refused before any handler runs: a parameter the row does not declare is the caller's mistake.
        expect(expectErrorEnvelope(answer, 400)).toMatchObject({
          code: 'unknown_query_parameter',
          errors: [expect.objectContaining({ location: 'query', pointer: `/${name}` })],
        });
      }
    }
  },
);

// These routes act (deactivate, delete, rotate): on ids no record has, so that this file's tenant stays as it is.
test.each(withKeys(routes.filter((route) => !route.body && route.method !== 'GET')))(
  '%s takes no body: one sent is ignored, not validated',
  async (_key, route) => {
    // A handler that validates a body its row does not name fails with a 500.
    const answer = await api(route.method, pathOf(route, '999999'), { token: tokenOf(route), body: [] });
    expect(answer.status, JSON.stringify(answer.body)).toBeLessThan(500);
    expect(answer.body?.errors ?? []).not.toContainEqual(expect.objectContaining({ location: 'body' }));
  },
);
