/**
 * Every opaque value the service hands out and later reads back (cursors, ETags, Idempotency-Keys;
 * ids in paths are fuzzed by fuzz.test.ts and isolated by hostile-inputs.test.ts), forged,
 * truncated, or taken from another list or another tenant: a 4xx that says which, never a 5xx,
 * and nothing changed. Generated over the route table: a route that reads one of them and has no
 * case here fails the coverage test.
 */
import { beforeAll, describe, expect, test } from 'vitest';
import { queryParametersOf, type Route, routeKey, routes } from '#functions/routes.ts';
import { api, type ApiAnswer, newTenant } from '#test/support/api.ts';
import { finishedRollout, type Party, party, pathFor, snapshot, tokenFor } from '#test/support/party.ts';
import { tablePermission } from '#test/support/permissions.ts';
import { eventually, publish, retailBundle } from '#test/support/templates.ts';
import { putRuns } from '#functions/core/schedules/schedule-repository.ts';

/**
 * Two items in each list of `owner`'s that the party leaves with fewer, so each gives a cursor (a
 * page of one item that is the whole list is the last page, with none): tenants, templates and
 * schedules (a second of each; the second tenant with the template, so its fleet is two), rollouts
 * (a second, whose tenants are those two), runs (a reload of two flows), permission records (two
 * tables), schedule runs (written as the fire worker writes them) and deliveries (an alert sent twice).
 */
async function twoOfEach(owner: Party): Promise<void> {
  const token = owner.tenant.token;
  await newTenant(owner.client.token, { nome: 'Second', templateId: owner.templateId });
  // A second rollout, over both tenants: the template's rollouts, and this one's tenants, are lists of two.
  owner.ids.rollout = await finishedRollout(owner.client.token, owner.templateId);
  await publish(owner.client.token, { ...retailBundle(), nome: 'Second template' });
  const second = (owner.ids.schedule as number) + 100;
  const file = {
    header: { id: second },
    body: { nome: 'S2', ativo: false, timezone: 'UTC', flows: [{ flow_etl_id: owner.flows[0], context: 'full' }], triggers: [] },
  };
  expect((await api('PUT', `/tenant/schedules/${second}`, { token, body: file })).status).toBe(201);
  await api('POST', '/agent/heartbeat', { token: owner.agent });
  const reload = await api('POST', '/tenant/templates/reload', {
    token,
    body: { items: owner.flows.slice(0, 2).map((flowId) => ({ flowId, context: 'full', tokenId: 1 })) },
  });
  expect(reload.status).toBe(200);
  const records = { permissions: owner.tables.slice(0, 2).map((tableId) => tablePermission(tableId)) };
  const { datamart, user, group, schedule } = owner.ids;
  for (const path of [`/tenant/datamart/${datamart}/user/${user}`, `/tenant/datamart/${datamart}/group/${group}`]) {
    expect((await api('PUT', path, { token, body: records })).status).toBe(200);
  }
  const firedAt = new Date().toISOString();
  await putRuns(
    ['2026-01-01T00:00:00.000Z', '2026-01-02T00:00:00.000Z'].map((slot) => ({
      tenantId: owner.tenant.id,
      scheduleId: schedule as number,
      slot,
      slotLocal: slot,
      firedAt,
      scheduleVersion: 1,
      status: 'fired',
      flows: [],
      expiresAt: Math.floor(Date.now() / 1000) + 3600,
    })),
  );
  const alert = await api('POST', '/tenant/alerts', {
    token,
    body: { nome: 'Paged', channels: { webhook: true }, content: [] },
  });
  for (let sent = 0; sent < 2; sent++) {
    const queued = await api('POST', `/tenant/alerts/${alert.body.data.id}/send`, { token, body: { user: { id: 1 } } });
    expect(queued.status).toBe(202);
  }
  owner.ids.alert = alert.body.data.id;
  await eventually(async () => {
    const runs = await api('GET', '/tenant/runs', { token });
    return runs.body.data.length >= 2 ? true : undefined;
  });
}

/** Parties with pages to forge cursors of (their deliveries and runs change in the background), and quiet ones. */
let a: Party;
let b: Party;
let quiet: Party;
let quietOther: Party;
beforeAll(async () => {
  [a, b, quiet, quietOther] = await Promise.all([party(1), party(1), party(0), party(0)]);
  await Promise.all([twoOfEach(a), twoOfEach(b)]);
}, 120_000);

const readsCursor = (route: Route) => queryParametersOf(route).some(({ name }) => name === 'cursor');
const cursorRoutes = routes.filter(readsCursor);
const ifMatchRoutes = routes.filter((route) => route.ifMatch);
const idempotentRoutes = routes.filter((route) => route.idempotent);

/** A 4xx in the envelope with this code: never a 5xx, never the gateway's bare answer. */
function expectRefused(answer: ApiAnswer, status: number, code: string, what: string) {
  expect({ status: answer.status, code: answer.body?.code }, what).toEqual({ status, code });
}

/** The first page's cursor (one item a page) of a list of `owner`'s. */
async function cursorOf(route: Route, owner: Party): Promise<string> {
  const answer = await api('GET', `${pathFor(route, owner)}?limit=1`, { token: tokenFor(route, owner) });
  expect(answer.status, routeKey(route)).toBe(200);
  const cursor = answer.body.nextCursor as string | null;
  if (!cursor) throw new Error(`${routeKey(route)}: the party has fewer than two items to page through`);
  return cursor;
}

describe('cursors', () => {
  test('every list that reads a cursor is here', () => {
    expect(cursorRoutes.length).toBeGreaterThan(8);
    expect(cursorRoutes.every((route) => route.method === 'GET')).toBe(true);
  });

  test.each(cursorRoutes.map((route) => [routeKey(route), route] as const))(
    '%s: forged, truncated, another list’s or another tenant’s cursor is 400 invalid_query_parameter',
    async (_key, route) => {
      const own = await cursorOf(route, a);
      // The party's lists with two items or more give cursors; another list is any other of them.
      const otherList = cursorRoutes.find((other) => other !== route && other.path !== route.path) as Route;
      const forged = {
        'not base64url': '%%%',
        'base64url of no JSON': Buffer.from('not json').toString('base64url'),
        'JSON of no key': Buffer.from('{"pk":1}').toString('base64url'),
        'an array': Buffer.from('[]').toString('base64url'),
        'a key of a partition not its own': Buffer.from(JSON.stringify({ pk: 'TENANT#999999999', sk: 'USER#1' })).toString(
          'base64url',
        ),
        'a huge value': Buffer.from(JSON.stringify({ pk: 'x'.repeat(4000), sk: 'y' })).toString('base64url'),
        truncated: own.slice(0, -3),
        // Characters that decode to bytes more (one alone may only add bits base64url ignores: the same cursor).
        'characters more': `${own}AAAA`,
        "another tenant's": await cursorOf(route, b),
        "another list's": await cursorOf(otherList, a),
      };
      for (const [what, cursor] of Object.entries(forged)) {
        const answer = await api('GET', `${pathFor(route, a)}?limit=1&cursor=${encodeURIComponent(cursor)}`, {
          token: tokenFor(route, a),
        });
        expectRefused(answer, 400, 'invalid_query_parameter', `${routeKey(route)} ${what}`);
      }
      // The real one still works.
      const next = await api('GET', `${pathFor(route, a)}?limit=1&cursor=${own}`, { token: tokenFor(route, a) });
      expect(next.status).toBe(200);
    },
    60_000,
  );
});

/** A body each If-Match route takes, so that the request reaches the version check. */
const ifMatchBodies: Record<string, (owner: Party) => unknown> = {
  'PATCH /tenants/{id}': () => ({ nome: 'Renamed by a stale editor' }),
  'DELETE /tenants/templates/{id}': () => undefined,
  'PUT /tenant/schedules/{id}': (owner) => ({
    header: { id: owner.ids.schedule },
    body: {
      nome: 'Stale',
      ativo: false,
      timezone: 'UTC',
      flows: [{ flow_etl_id: owner.flows[0], context: 'full' }],
      triggers: [],
    },
  }),
  'DELETE /tenant/schedules/{id}': () => undefined,
};

/** The path where the resource an If-Match route changes is read, with its ETag. */
const readPathOf = (route: Route, owner: Party) => pathFor({ ...route, method: 'GET' }, owner);

describe('ETags', () => {
  test('every route that honours If-Match is here', () => {
    expect(ifMatchRoutes.map(routeKey).sort()).toEqual(Object.keys(ifMatchBodies).sort());
  });

  test.each(ifMatchRoutes.map((route) => [routeKey(route), route] as const))(
    '%s: a forged, weak, truncated or another tenant’s ETag is 412 version_mismatch, and changes nothing',
    async (key, route) => {
      const read = async (owner: Party) => {
        const answer = await api('GET', readPathOf(route, owner), { token: tokenFor(route, owner) });
        expect(answer.status, key).toBe(200);
        return answer.headers.get('etag') as string;
      };
      const [own, theirs] = await Promise.all([read(quiet), read(quietOther)]);
      const before = await snapshot(quiet);
      const forged = {
        'a version never issued': '"999999999"',
        'the weak form of the current one': `W/${own}`,
        truncated: own.slice(0, -2),
        'one character more': `${own.slice(0, -1)}0"`,
        'unquoted garbage': 'x'.repeat(2000),
        'latin-1': '"é"',
        ...(theirs === own ? {} : { "another tenant's": theirs }),
      };
      for (const [what, ifMatch] of Object.entries(forged)) {
        const body = ifMatchBodies[key]?.(quiet);
        const answer = await api(route.method, pathFor(route, quiet), {
          token: tokenFor(route, quiet),
          headers: { 'if-match': ifMatch },
          ...(body === undefined ? {} : { body }),
        });
        expectRefused(answer, 412, 'version_mismatch', `${key} ${what}`);
      }
      expect(await snapshot(quiet)).toEqual(before);
    },
    60_000,
  );
});

/** A body each idempotent route takes, so that the request reaches the key check. */
const idempotentBodies: Record<string, (owner: Party) => unknown> = {
  'POST /tenants': () => ({ nome: 'Keyed', ativo: true }),
  'POST /tenants/templates': () => ({ ...retailBundle(), nome: `Keyed ${crypto.randomUUID()}` }),
  'POST /tenant/templates/reload': (owner) => ({ items: [{ flowId: owner.flows[0], context: 'full', tokenId: 1 }] }),
  // No body: the quiet parties have no run, so each answers its own 404.
  'POST /tenant/runs/{id}/retry': () => undefined,
  'POST /tenant/agents': () => ({ nome: `keyed-${crypto.randomUUID().slice(0, 8)}` }),
  'POST /tenant/users': () => ({ login: `keyed-${crypto.randomUUID()}@x.io`, nome: 'Keyed' }),
  'POST /tenant/groups': () => ({ nome: `Keyed ${crypto.randomUUID()}` }),
  'POST /tenant/datamart': (owner) => ({ nome: 'Keyed', tables: owner.tables, owners: [owner.ids.user] }),
  'POST /tenant/alerts': () => ({ nome: 'Keyed', channels: { webhook: false }, content: [] }),
  'POST /tenant/alerts/{id}/send': () => ({ user: { id: 1 } }),
  'POST /tenant/alerts/{id}/fire': () => ({ user: { id: 1 } }),
  // A dry run: each party's answer is its own, and neither starts a rollout the next case would meet.
  'POST /tenants/templates/{id}/rollouts': () => ({ tenants: 'all', dryRun: true }),
};

describe('Idempotency-Keys', () => {
  test('every idempotent route is here', () => {
    expect(idempotentRoutes.map(routeKey).sort()).toEqual(Object.keys(idempotentBodies).sort());
  });

  test.each(idempotentRoutes.map((route) => [routeKey(route), route] as const))(
    '%s: a malformed key is 400 invalid_idempotency_key and runs nothing; another tenant’s key is no replay',
    async (key, route) => {
      const before = await snapshot(quiet);
      const malformed = {
        'too long': 'k'.repeat(256),
        'latin-1': 'clé',
        'a tab': 'a\tb',
        empty: '',
      };
      for (const [what, idempotencyKey] of Object.entries(malformed)) {
        const answer = await api(route.method, pathFor(route, quiet), {
          token: tokenFor(route, quiet),
          headers: { 'idempotency-key': idempotencyKey },
          body: idempotentBodies[key]?.(quiet),
        });
        expectRefused(answer, 400, 'invalid_idempotency_key', `${key} ${what}`);
      }
      expect(await snapshot(quiet)).toEqual(before);
      // One key, sent by two tenants (or clients): each its own request, replayed to itself only.
      const shared = `shared-${crypto.randomUUID()}`;
      const [ourBody, theirBody] = [idempotentBodies[key]?.(quiet), idempotentBodies[key]?.(quietOther)];
      const send = (owner: Party, body: unknown) =>
        api(route.method, pathFor(route, owner), {
          token: tokenFor(route, owner),
          headers: { 'idempotency-key': shared },
          body,
        });
      const [ours, theirs] = await Promise.all([send(quiet, ourBody), send(quietOther, theirBody)]);
      expect(ours.status, key).toBeLessThan(500);
      expect(theirs.status, key).toBe(ours.status);
      const withoutRequestId = (answer: ApiAnswer) => ({ ...answer.body, requestId: undefined });
      expect(withoutRequestId(await send(quietOther, theirBody)), key).toEqual(withoutRequestId(theirs));
      expect(withoutRequestId(await send(quiet, ourBody)), key).toEqual(withoutRequestId(ours));
    },
    60_000,
  );
});
