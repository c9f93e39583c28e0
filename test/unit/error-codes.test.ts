import { readFileSync } from 'node:fs';
import { expect, test } from 'vitest';
import { type ErrorCode, errorCodes } from '#functions/core/error-codes.ts';
import { type Route, routeKey, routes, unmatchedRoute } from '#functions/routes.ts';
import { routeErrorCodes } from '#tools/openapi/error-codes.ts';
import { openApiFile } from '#tools/openapi/openapi-file.ts';
import { expectDocumented } from '#test/support/documented.ts';

type Responses = Record<
  string,
  { content?: Record<string, { schema?: { allOf?: Array<{ properties?: { code?: { enum?: string[] } } }> } }> }
>;
const document = JSON.parse(readFileSync(openApiFile, 'utf8')) as {
  paths: Record<string, Record<string, { responses: Responses }>>;
};
const codes = routeErrorCodes<Pick<Route, 'handler' | 'auth'> & Partial<Route>>([...routes, unmatchedRoute]);
const routeOf = (key: string) => {
  const route = routes.find((candidate) => routeKey(candidate) === key);
  if (!route) throw new Error(`no route ${key}`);
  return route;
};
const codesOf = (key: string) => codes.get(routeOf(key)) ?? [];
/** The codes the document lists for one status of one route. */
const documentedCodes = (key: string, status: number) => {
  const route = routeOf(key);
  const schema =
    document.paths[route.path]?.[route.method.toLowerCase()]?.responses[status]?.content?.['application/json']?.schema;
  return schema?.allOf?.[1]?.properties?.code?.enum ?? [];
};

test('every code of the catalog is one some route can answer: none is dead, none is missing from the document', () => {
  const reached = new Set([...codes.values()].flat());
  const answeredByFunctions = (Object.keys(errorCodes) as ErrorCode[]).filter((code) => !('answeredAtEdge' in errorCodes[code]));
  expect(answeredByFunctions.filter((code) => !reached.has(code))).toEqual([]);
  // What the edge answers no function can: the document describes it with every route's 429.
  expect([...reached].filter((code) => 'answeredAtEdge' in errorCodes[code])).toEqual([]);
});

test("a route lists its handler's own codes, with the status the catalog gives them", () => {
  expect(documentedCodes('POST /tenant/agents', 409)).toEqual(expect.arrayContaining(['agent_name_taken', 'agent_limit']));
  expect(documentedCodes('POST /tenant/users', 409)).toContain('login_taken');
  expect(documentedCodes('DELETE /tenants/templates/{id}', 409)).toContain('template_is_default');
  expect(documentedCodes('POST /tenant/deliveries/{id}/redeliver', 409)).toEqual(
    expect.arrayContaining(['delivery_not_failed', 'payload_expired', 'channel_inactive']),
  );
  expect(documentedCodes('POST /tenant/login', 503)).toEqual(['no_signing_key']);
  expect(documentedCodes('PUT /tenant/schedules/{id}', 400)).toEqual(
    expect.arrayContaining(['malformed_yaml', 'validation_failed']),
  );
});

test("a route does not list what only other routes' code throws, nor what its row rules out", () => {
  // A shared module's other exports are shaken out of the bundle, and with them their codes.
  expect(codesOf('GET /tenant')).not.toContain('agent_name_taken');
  expect(codesOf('GET /tenant/agents')).not.toContain('agent_name_taken');
  expect(codesOf('GET /tenants/{id}')).not.toContain('tenant_inactive');
  // The pipeline's refusals follow the row: no body, no Idempotency-Key, no token.
  expect(codesOf('GET /tenant/users')).not.toContain('validation_failed');
  expect(codesOf('GET /tenant/users')).not.toContain('idempotency_key_reused');
  expect(codesOf('PATCH /tenant/users/{id}')).not.toContain('idempotency_key_reused');
  // Every answer is measured in the pipeline, so every route may answer answer_too_large.
  expect(codesOf('GET /health')).toEqual(['unknown_query_parameter', 'answer_too_large', 'internal_error']);
  expect(codes.get(unmatchedRoute)).toContain('method_not_allowed');
});

test('every route that takes a token lists 401 and 403, every route with a body 400, 413 and 415', () => {
  for (const route of routes) {
    const listed = codes.get(route) ?? [];
    if (route.auth.length > 0)
      expect(listed, routeKey(route)).toEqual(expect.arrayContaining(['unauthorized', 'wrong_token_kind']));
    if (route.body)
      expect(listed, routeKey(route)).toEqual(
        expect.arrayContaining(['validation_failed', 'malformed_json', 'payload_too_large', 'unsupported_media_type']),
      );
    if (route.idempotent) expect(listed, routeKey(route)).toContain('idempotency_key_reused');
  }
});

test('the contract check refuses an error answer whose code its route does not list', () => {
  const answer = (code: string) => ({
    status: 409,
    contentType: 'application/json; charset=utf-8',
    body: { status: 'error', success: false, message: 'm', code, errors: [], errorCount: 0, requestId: 'r' },
  });
  expect(() => expectDocumented('POST', '/tenant/agents', answer('agent_limit'))).not.toThrow();
  expect(() => expectDocumented('POST', '/tenant/agents', answer('template_is_default'))).toThrow(/does not match/);
  expect(() => expectDocumented('GET', '/tenant/agents', answer('agent_limit'))).toThrow(/does not document/);
});
