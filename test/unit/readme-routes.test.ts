import { readFileSync } from 'node:fs';
import { expect, test } from 'vitest';
import { type Route, routeKey, routes } from '#functions/routes.ts';

/** What the README's route table says each route takes, as its Auth column reads. */
const authColumn = (route: Route) =>
  route.auth.length > 0
    ? route.auth.join(' or ')
    : route.docs.credential?.in === 'path'
      ? 'login token'
      : route.docs.credential?.in === 'cookie'
        ? 'session cookie'
        : 'none';

test("the README's route table lists every route of functions/routes.ts, with its auth, and no other", () => {
  const readme = readFileSync(new URL('../../README.md', import.meta.url), 'utf8');
  const rows = [...readme.matchAll(/^\| `((?:GET|POST|PUT|PATCH|DELETE) [^`]+)` +\| ([^|]+?) +\|/gm)].map(
    ([, route, auth]) => `${route} ${auth}`,
  );
  expect(rows.sort()).toEqual(routes.map((route) => `${routeKey(route)} ${authColumn(route)}`).sort());
});
