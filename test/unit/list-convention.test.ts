/**
 * The one list convention, over the route table: every list a caller reads takes `limit` and
 * `cursor`, with one page size and one maximum, paged always or whole unless `limit` is sent.
 * test/e2e/list-convention.test.ts walks each of them over HTTP.
 */
import { describe, expect, test } from 'vitest';
import { maxAgentsPerTenant } from '#functions/core/agents/agents.ts';
import { maxTemplatesPerClient } from '#functions/core/clients/quotas.ts';
import { maxGroupsPerTenant } from '#functions/core/directory/quotas.ts';
import { pageQuery, pageSize, queryParametersOf, type Route, routeKey, routes, wholeListQuery } from '#functions/routes.ts';

const answersList = (route: Route) =>
  route.docs.answer !== undefined && 'data' in route.docs.answer && route.docs.answer.list === true;

/**
 * The lists a caller reads. A PUT or DELETE that answers a list answers what its write left (a
 * subject's permission records on one datamart), not a list to walk.
 */
const lists = routes.filter((route) => route.method === 'GET' && answersList(route));

/** Lists computed whole, whose docs say why they take no `limit`. */
const computedWhole = new Set(['GET /tenant/datamart/{id}/user/{userId}/effective']);

const withKeys = (list: readonly Route[]) => list.map((route) => [routeKey(route), route] as const);

test('the lists computed whole are lists of the table', () => {
  expect(lists.map(routeKey)).toEqual(expect.arrayContaining([...computedWhole]));
});

describe.each(withKeys(lists.filter((route) => !computedWhole.has(routeKey(route)))))('%s', (_key, route) => {
  const parameters = queryParametersOf(route);
  const named = (name: string) => parameters.filter((parameter) => parameter.name === name);

  test('takes limit and cursor once, paged always or whole unless limit is sent, with the one page size', () => {
    expect(named('limit')).toHaveLength(1);
    expect(named('cursor')).toHaveLength(1);
    // Exactly one of the two conventions: pageQuery's parameters, or wholeListQuery's.
    expect(Boolean(route.paginated)).not.toBe(wholeListQuery.every((parameter) => route.query?.includes(parameter)));
    expect(parameters).toEqual(expect.arrayContaining([...(route.paginated ? pageQuery : wholeListQuery)]));
    const bounds = { type: 'integer', minimum: 1, maximum: pageSize.maximum };
    expect(named('limit')[0]?.schema).toEqual(route.paginated ? { ...bounds, default: pageSize.default } : bounds);
    expect(named('cursor')[0]?.schema).toEqual({ type: 'string' });
  });
});

test.each(withKeys(lists.filter((route) => computedWhole.has(routeKey(route)))))(
  '%s takes no limit, and its docs say why',
  (_key, route) => {
    expect(queryParametersOf(route).map((parameter) => parameter.name)).not.toContain('limit');
    expect(route.docs.description).toMatch(/no `limit`: .*computed/);
  },
);

test.each([
  ['GET /tenant/groups', maxGroupsPerTenant],
  ['GET /tenant/agents', maxAgentsPerTenant],
  ['GET /tenants/templates', maxTemplatesPerClient],
])('%s is whole unless limit is sent, and its docs name the quota that bounds the whole', (key, quota) => {
  const route = routes.find((candidate) => routeKey(candidate) === key);
  expect(route?.query).toBe(wholeListQuery);
  expect(route?.docs.description).toContain(`at most the ${quota.toLocaleString('en')} `);
});
