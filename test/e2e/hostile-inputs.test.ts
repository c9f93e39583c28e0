/**
 * Hostile input over real HTTP, for every route of the route table: bodies of the wrong type,
 * with unknown fields, prototype-pollution keys, deep nesting, huge strings and numbers, invalid
 * UTF-8; missing, unknown and wrong-kind tokens; and other tenants' and clients' ids. Every answer
 * must be a 4xx with the error envelope (never a 500, never a stack trace), and afterwards both
 * tenants' data must be exactly as before (nothing half-written).
 */
import fc from 'fast-check';
import { stringify } from 'yaml';
import { afterAll, beforeAll, describe, expect, inject, test } from 'vitest';
import { maxBodyBytes } from '#functions/core/api/request-body.ts';
import { routeKey, routes } from '#functions/routes.ts';
import { api, type ApiAnswer, expectErrorEnvelope } from '#test/support/api.ts';
import { type Party, party, pathFor, snapshot, tokenFor } from '#test/support/party.ts';
import { scheduleFile } from '#test/support/schedules.ts';
import { retailBundle } from '#test/support/templates.ts';

let cases = 0;
const send = async (method: string, path: string, options: Parameters<typeof api>[2] = {}) => {
  cases++;
  return api(method, path, options);
};

let a: Party;
let b: Party;
beforeAll(async () => {
  // B has more of everything than A, so B's newest ids do not exist under A.
  a = await party(0);
  b = await party(3);
}, 60_000);

function expectRefusal(answer: ApiAnswer, what: string) {
  expect(answer.status, `${what}: ${JSON.stringify(answer.body).slice(0, 300)}`).toBeGreaterThanOrEqual(400);
  expect(answer.status, what).toBeLessThan(500);
  // API Gateway's own 404 for unknown paths has no envelope; every route of ours answers with one.
  expect(answer.body, what).toMatchObject({
    status: 'error',
    success: false,
    message: expect.any(String),
    errors: expect.any(Array),
  });
  expect(JSON.stringify(answer.body), what).not.toMatch(/\n\s+at |node_modules|\.ts:\d+/);
}

const hostileValue: fc.Arbitrary<unknown> = fc.oneof(
  fc.string(),
  fc.integer(),
  fc.double(),
  fc.boolean(),
  fc.constant(null),
  fc.array(fc.anything({ maxDepth: 2 }), { maxLength: 5 }),
  fc.constantFrom(1e308, -1e308, 2 ** 64, Number.MAX_SAFE_INTEGER + 2, -0),
  fc.string({ minLength: 50_000, maxLength: 60_000 }),
);
/** Objects that no request schema accepts: an unknown key is always there (every schema is closed). */
const hostileObject: fc.Arbitrary<Record<string, unknown>> = fc
  .tuple(
    fc.dictionary(
      fc.constantFrom('nome', 'id', 'login', 'items', 'user', 'header', 'body', 'permissions', 'constructor', 'prototype'),
      hostileValue,
      {
        maxKeys: 4,
      },
    ),
    fc.string({ minLength: 1, maxLength: 20 }).map((key) => `x_${key}`),
    hostileValue,
  )
  .map(([object, key, value]) => ({ ...object, [key]: value }));

const bodyRoutes = routes.filter((route) => route.body);
const authenticated = routes.filter((route) => route.auth.length > 0);

describe('hostile input, over every route', () => {
  afterAll(() => {
    console.log(`hostile-input suite: ${cases} requests`);
  });

  test.each(bodyRoutes.map((route) => [routeKey(route), route] as const))(
    '%s refuses hostile bodies with a 4xx envelope',
    async (_key, route) => {
      const path = pathFor(route, a);
      const token = tokenFor(route, a);
      await fc.assert(
        fc.asyncProperty(fc.oneof(hostileValue, hostileObject), async (body) => {
          expectRefusal(
            await send(route.method, path, { token, body }),
            `${routeKey(route)} ${JSON.stringify(body).slice(0, 80)}`,
          );
        }),
        { numRuns: 12 },
      );
      const fixed: Array<[string, Parameters<typeof api>[2]]> = [
        ['__proto__', { token, rawBody: '{"__proto__":{"polluted":true}}', headers: { 'content-type': 'application/json' } }],
        ['constructor.prototype', { token, body: { constructor: { prototype: { polluted: true } } } }],
        [
          'deep nesting',
          { token, rawBody: `${'['.repeat(5000)}${']'.repeat(5000)}`, headers: { 'content-type': 'application/json' } },
        ],
        [
          'invalid UTF-8',
          {
            token,
            rawBody: Buffer.from([0x7b, 0x22, 0x61, 0x22, 0x3a, 0x22, 0xff, 0xfe, 0x22, 0x7d]),
            headers: { 'content-type': 'application/json' },
          },
        ],
        ['not JSON', { token, rawBody: '{"a":', headers: { 'content-type': 'application/json' } }],
        ['lone surrogate', { token, rawBody: '{"nome":"\\ud800"}', headers: { 'content-type': 'application/json' } }],
        ['NUL', { token, rawBody: '{"nome":"a\\u0000"}', headers: { 'content-type': 'application/json' } }],
        ['UTF-16 charset', { token, rawBody: '{}', headers: { 'content-type': 'application/json; charset=utf-16' } }],
        ['constructor naming a type', { token, body: { constructor: { name: 'Set' } } }],
        ['wrong content type', { token, rawBody: 'a=b', headers: { 'content-type': 'application/x-www-form-urlencoded' } }],
        [
          'too large',
          // Over the bound in the characters that escape the most (6 bytes each in the event), which still fits
          // Lambda's: our 413 (a larger event is API Gateway's own 500, test/integration/aws-limits-gateway.test.ts).
          { token, rawBody: `{"a":"${'\u0001'.repeat(maxBodyBytes)}"}`, headers: { 'content-type': 'application/json' } },
        ],
        // A body the route lets callers leave out (the token rotations) means its defaults: no refusal to expect.
        ...(route.bodyOptional ? [] : ([['no body', { token }]] as Array<[string, Parameters<typeof api>[2]]>)),
      ];
      for (const [what, options] of fixed) expectRefusal(await send(route.method, path, options), `${routeKey(route)} ${what}`);
      // This worker's prototype; the twin's process is checked when the run ends (test/support/global-setup.ts).
      expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    },
    120_000,
  );

  test.each(authenticated.map((route) => [routeKey(route), route] as const))(
    '%s refuses missing and unknown tokens (401) and a valid token of the wrong kind (403)',
    async (_key, route) => {
      const path = pathFor(route, a);
      const wrongKind = route.auth.includes('tenant') ? a.client.token : a.tenant.token;
      for (const headers of <Array<Record<string, string>>>[
        {},
        { authorization: 'Bearer ten_unknownunknownunknownunknownunknownunknow' },
        { authorization: 'Basic abc' },
        { authorization: `Bearer ${wrongKind}` },
      ]) {
        const answer = await send(route.method, path, { headers, ...(route.body ? { body: {} } : {}) });
        const isWrongKind = headers.authorization === `Bearer ${wrongKind}`;
        if (route.auth.includes('client') && route.auth.includes('tenant') && isWrongKind) continue;
        expect(answer.status, `${routeKey(route)} ${JSON.stringify(headers)}`).toBe(isWrongKind ? 403 : 401);
        expectRefusal(answer, routeKey(route));
      }
    },
  );

  test("another tenant's or client's ids are 404 through every route, and its data is untouched", async () => {
    const before = await snapshot(b);
    const beforeA = await snapshot(a);
    // B's rollout too (the snapshot leaves rollouts out: fuzzing starts them, and they move on by themselves).
    const rolloutOf = async (owner: Party) =>
      (await api('GET', `/tenants/templates/${owner.templateId}/rollouts/${owner.ids.rollout}`, { token: owner.client.token }))
        .body.data;
    const rolloutBefore = await rolloutOf(b);
    const withIds = authenticated.filter(
      (route) => /\{(id|userId|groupId)\}/.test(route.path) && routeKey(route) !== 'PUT /tenant/schedules/{id}',
    );
    // A valid body where one is needed, so that only the id can make it fail.
    const validBodies: Record<string, unknown> = {
      'update-user': { nome: 'Changed' },
      'update-datamart': { nome: 'Changed' },
      'set-permissions': { permissions: [] },
      'update-tenant': { nome: 'Changed' },
      'template-bundle': { nome: 'Changed' },
      'update-alert': { nome: 'Changed' },
      'alert-delivery': { user: { id: 1 } },
      'report-run': { status: 'running' },
      'create-rollout': { tenants: 'all' },
    };
    for (const route of withIds) {
      const path = pathFor(route, b);
      const body = route.body ? validBodies[route.body] : undefined;
      const answer = await send(route.method, path, { token: tokenFor(route, a), ...(body ? { body } : {}) });
      expect(answer.status, `${routeKey(route)} ${path} ${JSON.stringify(answer.body).slice(0, 200)}`).toBe(404);
      expectRefusal(answer, routeKey(route));
    }
    // B's rollout under A's own template is no rollout of A's either.
    for (const route of withIds.filter((candidate) => candidate.path.includes('{rolloutId}'))) {
      const path = pathFor(route, a).replace(`/rollouts/${a.ids.rollout}`, `/rollouts/${b.ids.rollout}`);
      const answer = await send(route.method, path, { token: tokenFor(route, a) });
      expect(expectErrorEnvelope(answer, 404).code, `${routeKey(route)} ${path}`).toBe('rollout_not_found');
    }
    expect(await snapshot(b)).toEqual(before);
    expect(await snapshot(a)).toEqual(beforeA);
    expect(await rolloutOf(b)).toEqual(rolloutBefore);
  }, 60_000);

  test('numbers the store cannot hold and YAML tags that make no JSON are 400 where they once were 500 or stored', async () => {
    const unstorable = ['1e16', '9007199254740992', '-9007199254740993', '1e300', '5e-324'];
    for (const number of unstorable) {
      const tenant = await send('POST', '/tenants', {
        token: a.client.token,
        rawBody: `{"nome":"N","ativo":true,"development_variables":{"PORT":${number}}}`,
        headers: { 'content-type': 'application/json' },
      });
      expectRefusal(tenant, `development_variables ${number}`);
      const bundle = JSON.stringify({ ...retailBundle(), nome: `Numbers ${number}` }).replace(
        '"kind":"postgres"',
        `"kind":"postgres","properties":{"port":${number}}`,
      );
      const template = await send('POST', '/tenants/templates', {
        token: a.client.token,
        rawBody: bundle,
        headers: { 'content-type': 'application/json' },
      });
      expectRefusal(template, `connection property ${number}`);
      const schedule = await send('PUT', '/tenant/schedules/77', {
        token: a.tenant.token,
        rawBody: `${JSON.stringify(scheduleFile(77, a.flows, [{ type: 'Hour', period: 1, start_when: '06:30' } as never])).replace('"period":1', `"period":${number}`)}`,
        headers: { 'content-type': 'application/json' },
      });
      expectRefusal(schedule, `period ${number}`);
    }
    for (const labels of ['!!omap [a: "x"]', '!!set {a, b}', '!!timestamp 2001-01-01', '!!omap [__proto__: b]']) {
      const yaml = stringify(scheduleFile(78, a.flows)).replace('header:\n', `header:\n  labels: ${labels}\n`);
      const answer = await send('PUT', '/tenant/schedules/78', {
        token: a.tenant.token,
        rawBody: yaml,
        headers: { 'content-type': 'application/yaml' },
      });
      expectRefusal(answer, `labels ${labels}`);
    }
    expect((await api('GET', '/tenant/schedules/77', { token: a.tenant.token })).status).toBe(404);
    expect((await api('GET', '/tenant/schedules/78', { token: a.tenant.token })).status).toBe(404);
  });

  test('nothing of the hostile traffic changed either tenant', async () => {
    // Runs last in this file: the fuzzing above must have left A exactly as the setup made it.
    expect((await api('GET', '/tenant/users', { token: a.tenant.token })).body.data).toHaveLength(1);
    expect((await api('GET', '/tenant/alerts', { token: a.tenant.token })).body.data).toHaveLength(1);
    expect(
      (await api('GET', '/tenant/schedules', { token: a.tenant.token })).body.data.map((s: { version: number }) => s.version),
    ).toEqual([1]);
    expect(inject('twinUrl')).toMatch(/^http/);
  });
});
