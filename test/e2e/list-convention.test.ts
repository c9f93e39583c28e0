/**
 * The one list convention, over real HTTP, for every list route of the route table: pages of
 * `limit` walked by `nextCursor` give every item once, in the order of the whole list, and the last
 * page (also one exactly full) answers `nextCursor: null`. Each route's items are created the way
 * its callers create them, save a schedule's fires, which the fire worker writes: written here as
 * it writes them.
 */
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { putRuns } from '#functions/core/schedules/schedule-repository.ts';
import { queryParametersOf, type Route, routeKey, routes } from '#functions/routes.ts';
import { type ApiAnswer, api, getOk, newClient, newTenant } from '#test/support/api.ts';
import { each } from '#test/support/each.ts';
import { eventLog, finishedRollout } from '#test/support/party.ts';
import { tablePermission } from '#test/support/permissions.ts';
import { scheduleFile, tenantWithFlows } from '#test/support/schedules.ts';
import { agentToken, eventually, publish, retailBundle } from '#test/support/templates.ts';
import { startReceiver } from '#test/support/webhook-receiver.ts';

let receiver: Awaited<ReturnType<typeof startReceiver>>;
beforeAll(async () => {
  receiver = await startReceiver();
});
afterAll(() => receiver.close());

/** How many items each list is given: pages of 1, 2 and 3 then end exactly full, one short, and exactly full alone. */
const itemCount = 3;

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- the items are the routes' documented records, checked by api()
type Item = any;

/** A list with `itemCount` items: where to read it, as whom, and (for one filled asynchronously) when it is complete. */
interface Listing {
  path: string;
  token: string;
  settled?: (items: Item[]) => boolean;
}

/** A POST that must succeed, and its record. */
async function created(path: string, token: string, body: unknown): Promise<Item> {
  const answer = await api('POST', path, { token, body });
  if (answer.status >= 300) throw new Error(`POST ${path}: ${answer.status} ${JSON.stringify(answer.body)}`);
  return answer.body.data;
}

async function put(path: string, token: string, body?: unknown): Promise<void> {
  const answer = await api('PUT', path, { token, body });
  if (answer.status >= 300) throw new Error(`PUT ${path}: ${answer.status} ${JSON.stringify(answer.body)}`);
}

/** A tenant with the retail template's tables (`tables`), and a datamart of them. */
async function datamartTenant() {
  const { tenant } = await tenantWithFlows();
  const own = (await getOk('/tenant', tenant.token)).body.data;
  const tables: number[] = own.desks.flatMap((desk: { tables: Array<{ id: number }> }) => desk.tables.map((table) => table.id));
  const datamart = await created('/tenant/datamart', tenant.token, { nome: 'DM', tables, owners: [] });
  return { token: tenant.token, tables, datamart: datamart.id as number };
}

/** A tenant whose webhook points at the receiver, and one of its alerts. */
async function alertingTenant() {
  const tenant = await newTenant((await newClient()).token);
  const settings = await api('PATCH', '/tenant/settings', {
    token: tenant.token,
    body: { alertChannels: { webhook: { url: receiver.url('/list-convention') } } },
  });
  if (settings.status !== 200) throw new Error(`Settings: ${settings.status} ${JSON.stringify(settings.body)}`);
  const newAlert = (index: number) =>
    created('/tenant/alerts', tenant.token, {
      nome: `Alert ${index}`,
      channels: { webhook: true },
      content: [{ type: 'text', nome: 'Intro', generated: { text: 'Hi' } }],
    });
  return { token: tenant.token, newAlert };
}

/** An alert of an alerting tenant sent `itemCount` times: its deliveries. */
async function sentDeliveries() {
  const { token, newAlert } = await alertingTenant();
  const alert = await newAlert(0);
  for (let index = 0; index < itemCount; index++) {
    await created(`/tenant/alerts/${alert.id}/send`, token, {
      user: { id: index + 1 },
      content: [{ type: 'text', nome: 'Intro', generated: { text: `Hi ${index}` } }],
    });
  }
  return { token, alertId: alert.id as number };
}

/** Deliveries are read once every one is done, so that no page sees one change. */
const allDelivered = (deliveries: Item[]) =>
  deliveries.length === itemCount && deliveries.every((delivery) => delivery.status === 'delivered');

/** A schedule trigger that never fires while the test runs. */
const farHourly = { type: 'Hour', period: 1, start_when: '2099-06-01T00:00Z', start_time: '00:00', end_time: '23:59' } as const;

/**
 * A schedule with `count` fires, written as the fire worker writes them (nothing else makes them),
 * each with an `error` of `errorLength` characters.
 */
async function scheduleRuns(count = itemCount, errorLength = 0): Promise<Listing> {
  const { tenant, flows } = await tenantWithFlows();
  const flowId = flows['load-orders'] as number;
  await put('/tenant/schedules/1', tenant.token, scheduleFile(1, [flowId], [farHourly]));
  const expiresAt = Math.floor(Date.now() / 1000) + 86_400;
  await putRuns(
    Array.from({ length: count }, (_, index) => {
      const slot = `2026-03-0${index + 1}T10:00:00.000Z`;
      return {
        tenantId: tenant.id,
        scheduleId: 1,
        slot,
        slotLocal: `2026-03-0${index + 1}T07:00:00`,
        firedAt: slot,
        scheduleVersion: 1,
        status: 'failed' as const,
        flows: [{ flowId, context: 'full', tokenId: 1, status: 'enqueued' }],
        error: 'x'.repeat(errorLength) || 'Not queued',
        expiresAt,
      };
    }),
  );
  return { path: '/tenant/schedules/1/runs', token: tenant.token };
}

/** A client's template and `count` tenants that have it (its fleet). */
async function fleet(count: number) {
  const client = await newClient();
  const templateId = await publish(client.token, retailBundle());
  await each(count, (index) => newTenant(client.token, { nome: `Shop ${index}`, templateId }));
  return { token: client.token, templateId };
}

/** How each list route's items are made: every list route of the table has one (checked below). */
const listings: Record<string, () => Promise<Listing>> = {
  'GET /tenants': async () => {
    const client = await newClient();
    await each(itemCount, (index) => newTenant(client.token, { nome: `Tenant ${index}` }));
    return { path: '/tenants', token: client.token };
  },
  'GET /tenants/audit': async () => {
    // Each tenant's creation is a record of the client's trail (in the tenant's chain).
    const client = await newClient();
    await each(itemCount, (index) => newTenant(client.token, { nome: `Audited ${index}` }));
    return { path: '/tenants/audit', token: client.token };
  },
  'GET /tenant/audit': async () => {
    // The tenant's creation, then two changes of its own.
    const client = await newClient();
    const tenant = await newTenant(client.token);
    for (let index = 1; index < itemCount; index++) await created('/tenant/groups', tenant.token, { nome: `Audited ${index}` });
    return { path: '/tenant/audit', token: tenant.token };
  },
  'GET /tenants/templates': async () => {
    const client = await newClient();
    for (let index = 0; index < itemCount; index++) await publish(client.token, { ...retailBundle(), nome: `Retail ${index}` });
    return { path: '/tenants/templates', token: client.token };
  },
  'GET /tenants/templates/{id}/tenants': async () => {
    const { token, templateId } = await fleet(itemCount);
    return { path: `/tenants/templates/${templateId}/tenants`, token };
  },
  'GET /tenants/deliveries': async () => {
    const client = await newClient();
    const tenant = await newTenant(client.token);
    // Every event has failed (the webhook was off when it was sent) before the list is read.
    await eventLog(client, tenant.id, itemCount);
    return { path: '/tenants/deliveries', token: client.token };
  },
  'GET /tenants/templates/{id}/rollouts': async () => {
    const { token, templateId } = await fleet(1);
    // One rollout of a template runs at a time: each is started once the one before finished.
    for (let index = 0; index < itemCount; index++) await finishedRollout(token, templateId);
    return { path: `/tenants/templates/${templateId}/rollouts`, token };
  },
  'GET /tenants/templates/{id}/rollouts/{rolloutId}/tenants': async () => {
    const { token, templateId } = await fleet(itemCount);
    const rolloutId = await finishedRollout(token, templateId);
    return { path: `/tenants/templates/${templateId}/rollouts/${rolloutId}/tenants`, token };
  },
  'GET /tenant/agents': async () => {
    const { token } = await newTenant((await newClient()).token);
    // The tenant's default agent is the first.
    for (let index = 1; index < itemCount; index++) await created('/tenant/agents', token, { nome: `agent-${index}` });
    return { path: '/tenant/agents', token };
  },
  'GET /tenant/runs': async () => {
    const { tenant, flows } = await tenantWithFlows();
    // An agent that has not beaten is offline, and its loads are skipped: the default agent beats once first.
    await api('POST', '/agent/heartbeat', { token: await agentToken(tenant.token) });
    const items = Object.values(flows).map((flowId) => ({ flowId, tokenId: 1, context: 'full' }));
    expect(items).toHaveLength(itemCount);
    const reload = await api('POST', '/tenant/templates/reload', { token: tenant.token, body: { items } });
    expect(reload.status).toBe(200);
    // Loads become runs as the reload worker takes them off the queue.
    return { path: '/tenant/runs', token: tenant.token, settled: (runs) => runs.length === itemCount };
  },
  'GET /tenant/users': async () => {
    const { token } = await newTenant((await newClient()).token);
    await each(itemCount, (index) => created('/tenant/users', token, { login: `user${index}@acme.io`, nome: `User ${index}` }));
    return { path: '/tenant/users', token };
  },
  'GET /tenant/groups': async () => {
    const { token } = await newTenant((await newClient()).token);
    const [ana, bia] = await each(2, (index) =>
      created('/tenant/users', token, { login: `m${index}@acme.io`, nome: `M ${index}` }),
    );
    const groups = await each(itemCount, (index) => created('/tenant/groups', token, { nome: `Group ${index}` }));
    // Members on the first and the last group, none on the middle one: each page must carry its own groups' members.
    const members: Array<[Item, Item]> = [
      [groups[0], ana],
      [groups[0], bia],
      [groups[2], bia],
    ];
    for (const [group, user] of members) await put(`/tenant/groups/${group.id}/members/${user.id}`, token);
    return { path: '/tenant/groups', token };
  },
  'GET /tenant/datamart': async () => {
    const { token } = await newTenant((await newClient()).token);
    await each(itemCount, (index) => created('/tenant/datamart', token, { nome: `DM ${index}`, tables: [], owners: [] }));
    return { path: '/tenant/datamart', token };
  },
  'GET /tenant/datamart/{id}/user': async () => {
    const { token, tables, datamart } = await datamartTenant();
    const [ana, bia] = await each(2, (index) =>
      created('/tenant/users', token, { login: `p${index}@acme.io`, nome: `P ${index}` }),
    );
    // Two records of one user, one of another: a page may end inside a user's records.
    await put(`/tenant/datamart/${datamart}/user/${ana.id}`, token, {
      permissions: tables.slice(0, 2).map((id) => tablePermission(id)),
    });
    await put(`/tenant/datamart/${datamart}/user/${bia.id}`, token, {
      permissions: tables.slice(2).map((id) => tablePermission(id)),
    });
    return { path: `/tenant/datamart/${datamart}/user`, token };
  },
  'GET /tenant/datamart/{id}/group': async () => {
    const { token, tables, datamart } = await datamartTenant();
    const [sales, ops] = await each(2, (index) => created('/tenant/groups', token, { nome: `G ${index}` }));
    await put(`/tenant/datamart/${datamart}/group/${sales.id}`, token, {
      permissions: tables.slice(0, 2).map((id) => tablePermission(id)),
    });
    await put(`/tenant/datamart/${datamart}/group/${ops.id}`, token, {
      permissions: tables.slice(2).map((id) => tablePermission(id)),
    });
    return { path: `/tenant/datamart/${datamart}/group`, token };
  },
  'GET /tenant/schedules': async () => {
    const { tenant, flows } = await tenantWithFlows();
    for (let id = 1; id <= itemCount; id++) {
      await put(`/tenant/schedules/${id}`, tenant.token, scheduleFile(id, [flows['load-orders'] as number], [farHourly]));
    }
    return { path: '/tenant/schedules', token: tenant.token };
  },
  'GET /tenant/schedules/{id}/runs': () => scheduleRuns(),
  'GET /tenant/alerts': async () => {
    const { token, newAlert } = await alertingTenant();
    for (let index = 0; index < itemCount; index++) await newAlert(index);
    return { path: '/tenant/alerts', token };
  },
  'GET /tenant/alerts/{id}/deliveries': async () => {
    const { token, alertId } = await sentDeliveries();
    return { path: `/tenant/alerts/${alertId}/deliveries`, token, settled: allDelivered };
  },
  'GET /tenant/deliveries': async () => {
    const { token } = await sentDeliveries();
    return { path: '/tenant/deliveries', token, settled: allDelivered };
  },
};

const limitOf = (route: Route) => queryParametersOf(route).find((parameter) => parameter.name === 'limit');
const isList = (route: Route) =>
  route.docs.answer !== undefined && 'data' in route.docs.answer && route.docs.answer.list === true;
/** The list routes: every GET answering a list that takes `limit` (test/unit/list-convention.test.ts says which those are). */
const listRoutes = routes.filter((route) => route.method === 'GET' && isList(route) && limitOf(route) !== undefined);

/** The most a page holds (the same on every list: test/unit/list-convention.test.ts). */
const maxLimit = (() => {
  const schema = listRoutes[0] && limitOf(listRoutes[0])?.schema;
  if (!schema || !('maximum' in schema)) throw new Error('No list route with a limit');
  return schema.maximum;
})();

/** Every page of the list, `limit` at a time, from the first to the one answering `nextCursor: null`. */
async function walk({ path, token }: Listing, limit: number, count = itemCount): Promise<ApiAnswer['body'][]> {
  const pages: ApiAnswer['body'][] = [];
  let cursor: string | null = null;
  do {
    const query: URLSearchParams = new URLSearchParams({ limit: String(limit), ...(cursor === null ? {} : { cursor }) });
    const page: ApiAnswer['body'] = (await getOk(`${path}?${query}`, token)).body;
    expect(Object.keys(page).sort(), `${path} limit=${limit}`).toEqual(['data', 'nextCursor', 'status']);
    pages.push(page);
    cursor = page.nextCursor;
    // A list that never ends is a failure, not a hang.
    if (pages.length > count + 1) throw new Error(`${path}: more pages of ${limit} than items`);
  } while (cursor !== null);
  return pages;
}

test('every list route of the route table has its items made here', () => {
  expect(Object.keys(listings).sort()).toEqual(listRoutes.map(routeKey).sort());
});

/**
 * Walks the list by pages of every size from 1 to its length: each gives back `whole`, in order, in
 * full pages but the last, which holds what is left (never an empty page after a cursor) and is the
 * only one answering `nextCursor: null`.
 */
async function expectPagesOf(listing: Listing, whole: Item[]): Promise<void> {
  const count = whole.length;
  for (let limit = 1; limit <= count; limit++) {
    const pages = await walk(listing, limit, count);
    const sizes = Array.from({ length: Math.ceil(count / limit) }, (_, index) => Math.min(limit, count - index * limit));
    expect(
      pages.map((page) => page.data.length),
      `limit=${limit}`,
    ).toEqual(sizes);
    expect(
      pages.map((page) => page.nextCursor === null),
      `limit=${limit}`,
    ).toEqual(pages.map((_, index) => index === pages.length - 1));
    expect(
      pages.flatMap((page) => page.data),
      `limit=${limit}`,
    ).toEqual(whole);
  }
}

/** The whole list as one page of the largest size, once it has `count` items (and is `settled`, when filled asynchronously). */
function wholeListOf(listing: Listing, count = itemCount): Promise<Item[]> {
  return eventually(async () => {
    const [page, ...more] = await walk(listing, maxLimit, count);
    expect(more).toEqual([]);
    const items: Item[] = page.data;
    return items.length >= count && (listing.settled?.(items) ?? true) ? items : undefined;
  }, 30_000);
}

describe.each(listRoutes.map((route) => [routeKey(route), route] as const))('%s', (key, route) => {
  test(`pages of 1 to ${itemCount} give every item once, and nextCursor is null exactly on the last page`, async () => {
    const listing = await (listings[key] as () => Promise<Listing>)();
    const whole = await wholeListOf(listing);
    expect(whole).toHaveLength(itemCount);
    await expectPagesOf(listing, whole);

    // A list that is whole without `limit` stays so for today's callers: every item, and no nextCursor.
    const limit = limitOf(route)?.schema;
    if (limit && !('default' in limit)) {
      expect((await getOk(listing.path, listing.token)).body).toEqual({ status: 'success', data: whole });
    }
  }, 90_000);
});

test('a page that DynamoDB stops at its 1 MB per Query is still read to its size, and the last page still ends the list', async () => {
  // Items of about 380 kB: DynamoDB stops a Query at the third, past 1 MB, whatever its Limit, so a
  // page of 4 or 5 takes two Queries, and a page of 3 one that stops with more to come.
  const count = 5;
  const listing = await scheduleRuns(count, 380_000);
  const whole = await wholeListOf(listing, count);
  expect(whole).toHaveLength(count);
  await expectPagesOf(listing, whole);
}, 90_000);
