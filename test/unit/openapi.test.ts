import { readFileSync } from 'node:fs';
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import { describe, expect, test } from 'vitest';
import { operationIds } from '#tools/openapi/document.ts';
import { openApiFile } from '#tools/openapi/openapi-file.ts';
import { routeKey, routes } from '#functions/routes.ts';

type Json = Record<string, unknown>;
type Operation = {
  operationId: string;
  security: Array<Record<string, string[]>>;
  parameters?: Json[];
  requestBody?: { content: Record<string, { schema: Json; example: unknown }> };
  responses: Record<string, Json>;
};

const committed = readFileSync(openApiFile, 'utf8');
const document = JSON.parse(committed) as {
  paths: Record<string, Record<string, Operation>>;
  webhooks: Record<string, Record<string, Operation>>;
  components: Json;
};
const operationOf = (route: (typeof routes)[number]) => document.paths[route.path]?.[route.method.toLowerCase()] as Operation;

/** Every `$ref` of a value, with where it is. */
function* refsOf(value: unknown, at = '#'): Generator<[string, string]> {
  if (typeof value !== 'object' || value === null) return;
  for (const [key, child] of Object.entries(value)) {
    if (key === '$ref' && typeof child === 'string') yield [at, child];
    else yield* refsOf(child, `${at}/${key}`);
  }
}

function resolve(pointer: string): unknown {
  if (!pointer.startsWith('#/')) return undefined;
  let node: unknown = document;
  for (const token of pointer.slice(2).split('/')) {
    const key = token.replaceAll('~1', '/').replaceAll('~0', '~');
    node = typeof node === 'object' && node !== null ? (node as Json)[key] : undefined;
  }
  return node;
}

test('every route of the table is there with its method, and nothing else', () => {
  const documented = Object.entries(document.paths).flatMap(([path, operations]) =>
    Object.keys(operations).map((method) => `${method.toUpperCase()} ${path}`),
  );
  expect(documented.sort()).toEqual(routes.map(routeKey).sort());
  const ids = routes.map((route) => operationOf(route).operationId);
  expect(new Set(ids).size).toBe(ids.length);
});

test('two routes of one handler and one method are refused: they would share an operation id', () => {
  const [route] = routes;
  if (!route) throw new Error('no routes');
  expect(() => operationIds([route, { ...route, path: `${route.path}/again` }])).toThrow(/would share the operation id/);
  expect(operationIds([route, { ...route, method: route.method === 'GET' ? 'POST' : 'GET' }]).size).toBe(2);
});

test('no success answer is the bare envelope: every 2xx with a body has a schema that says what `data` is', () => {
  const bare: string[] = [];
  for (const route of routes) {
    for (const [status, response] of Object.entries(operationOf(route).responses)) {
      if (!status.startsWith('2')) continue;
      const content = (response.content ?? {}) as Record<string, { schema?: Json }>;
      for (const [mediaType, media] of Object.entries(content)) {
        if (media.schema?.$ref === '#/components/schemas/success-envelope')
          bare.push(`${routeKey(route)} ${status} ${mediaType}`);
      }
    }
  }
  expect(bare).toEqual([]);
});

test('every $ref resolves inside the document', () => {
  const refs = [...refsOf(document)];
  expect(refs.length).toBeGreaterThan(100);
  for (const [at, ref] of refs) expect(resolve(ref), `${at}: ${ref}`).toBeDefined();
});

test.each(routes.map((route) => [routeKey(route), route] as const))(
  '%s: security, body and headers as its row says',
  (_key, route) => {
    const operation = operationOf(route);
    const schemes = operation.security.flatMap((requirement) => Object.keys(requirement));
    if (route.auth.length > 0) expect(schemes).toEqual(route.auth.map((kind) => `${kind}BearerAuth`));
    else expect(schemes.filter((scheme) => scheme.endsWith('BearerAuth'))).toEqual([]);
    if (route.auth.length > 0) expect(operation.responses['401']).toBeDefined();

    const content = operation.requestBody?.content ?? {};
    expect(Object.keys(content).sort()).toEqual(
      route.body ? (route.yaml ? ['application/json', 'application/yaml'] : ['application/json']) : [],
    );
    for (const media of Object.values(content)) expect(media.schema).toEqual({ $ref: `#/components/schemas/${route.body}` });
    if (route.body) expect(Object.keys(operation.responses)).toEqual(expect.arrayContaining(['400', '413', '415']));

    const idempotencyKey = { $ref: '#/components/parameters/IdempotencyKey' };
    if (route.idempotent) expect(operation.parameters).toContainEqual(idempotencyKey);
    else expect(operation.parameters ?? []).not.toContainEqual(idempotencyKey);
    const pathParameters = (operation.parameters ?? [])
      .filter((parameter) => parameter.in === 'path')
      .map((parameter) => parameter.name);
    expect(pathParameters).toEqual([...route.path.matchAll(/\{(\w+)\}/g)].map((match) => match[1]));
    const queryParameters = (operation.parameters ?? []).filter((parameter) => parameter.in === 'query');
    expect(queryParameters.map((parameter) => parameter.name)).toEqual((route.query ?? []).map((parameter) => parameter.name));
    const pageParameters = ['limit', 'cursor'].map((name) => ({ $ref: `#/components/parameters/${name}` }));
    if (route.paginated) expect(operation.parameters).toEqual(expect.arrayContaining(pageParameters));
    else expect(operation.parameters ?? []).not.toContainEqual(pageParameters[1]);
    const ifMatch = (operation.parameters ?? []).some((parameter) => parameter.name === 'If-Match');
    expect(ifMatch).toBe(Boolean(route.ifMatch));
    expect(Object.keys(operation.responses)).toEqual(expect.arrayContaining(Object.keys(route.docs.success ?? { 200: '' })));
    const successes = Object.keys(operation.responses).filter((status) => /^[23]\d\d$/.test(status));
    expect(successes.length).toBeGreaterThan(0);
    // Every 2xx says what it answers; the one 3xx (the SSO landing's redirect) has no body.
    for (const status of successes) expect(Boolean(operation.responses[status]?.content), status).toBe(status.startsWith('2'));
  },
);

describe('examples', () => {
  // The document's own schemas (their $refs rewritten into components), not the files: this checks the rewriting too.
  const ajv = new Ajv2020({ strict: false, allErrors: true, allowUnionTypes: true });
  addFormats(ajv);
  ajv.addSchema({ $id: 'openapi.json', components: document.components });
  const validatorOf = (ref: string) => ajv.compile({ $ref: `openapi.json${ref}` });

  const bodies = [
    ...routes.flatMap((route) =>
      Object.entries(operationOf(route).requestBody?.content ?? {}).map(
        ([type, media]) => [`${routeKey(route)} ${type}`, media] as const,
      ),
    ),
    ...Object.entries(document.webhooks).map(
      ([name, webhook]) => [`webhook ${name}`, webhook.post?.requestBody?.content['application/json']] as const,
    ),
  ];

  test.each(bodies)('%s: its example is valid', (_name, media) => {
    const validate = validatorOf((media?.schema as { $ref: string }).$ref);
    expect(validate(media?.example), ajv.errorsText(validate.errors)).toBe(true);
  });

  test('the rewritten references still reject what the schemas reject', () => {
    const payload = document.webhooks.alert?.post?.requestBody?.content['application/json']?.example as Json;
    const validate = validatorOf('#/components/schemas/alert-webhook');
    expect(validate({ ...payload, extra: true })).toBe(false);
    // A report block with a text block's content: only the if/then through the hoisted $defs catches it.
    expect(validate({ ...payload, content: [{ type: 'report', nome: 'R', generated: { text: 'x' } }] })).toBe(false);
    // A Day trigger without its time: caught by the trigger's if/then through the hoisted `typeIs` entries.
    const schedule = validatorOf('#/components/schemas/schedule.v2');
    const file = document.paths['/tenant/schedules/{id}']?.put?.requestBody?.content['application/json']?.example as {
      body: Json;
    };
    expect(schedule(file)).toBe(true);
    expect(schedule({ ...file, body: { ...file.body, triggers: [{ type: 'Day' }] } })).toBe(false);
  });
});
