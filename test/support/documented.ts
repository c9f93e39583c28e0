import { readFileSync } from 'node:fs';
import { matchRoute } from '#local/route-matching.ts';
import { openApiFile } from '#tools/openapi/openapi-json.ts';

const document = JSON.parse(readFileSync(openApiFile, 'utf8')) as {
  paths: Record<string, Record<string, { responses: Record<string, unknown> }>>;
};

/**
 * Throws when a route answered with a status that docs/openapi.json does not document for it. The
 * test helpers that send real HTTP call it on every answer, so every status the e2e suite sees a
 * handler answer (its successes, its refusals) is checked against the API description.
 */
export function expectDocumented(method: string, url: string, status: number): void {
  const route = matchRoute(method, new URL(url, 'http://twin').pathname)?.route;
  if (!route) return; // not a route: the gateway's own 404
  const responses = document.paths[route.path]?.[method.toLowerCase()]?.responses ?? {};
  if (!(String(status) in responses)) {
    throw new Error(`${method} ${route.path} answered ${status}, which docs/openapi.json does not document for it`);
  }
}
