/**
 * A client with a tenant that has one of everything, for the suites that send every route of the
 * route table hostile input (test/e2e/hostile-inputs.test.ts, test/e2e/fuzz.test.ts): the paths
 * of its resources, the token each route takes, and a snapshot of all its tokens can read.
 */
import { clientEventWrites } from '#functions/core/events/client-events.ts';
import { transaction } from '#functions/core/store/transaction.ts';
import type { Route } from '#functions/routes.ts';
import { api, newClient, newTenant } from './api.ts';
import { agentToken, eventually, publish, retailBundle } from './templates.ts';

export interface Party {
  client: { token: string };
  tenant: { id: number; token: string };
  agent: string;
  templateId: number;
  ids: Record<string, number>;
  /** The tenant's tables and flows (from its template), by id. */
  tables: number[];
  flows: number[];
}

/** A tenant with one of everything (more of each with `extraUsers`), so that each route's ids point at something real. */
export async function party(extraUsers: number): Promise<Party> {
  const client = await newClient();
  const templateId = await publish(client.token, retailBundle());
  const tenant = await newTenant(client.token, { templateId });
  const token = tenant.token;
  const own = (await api('GET', '/tenant', { token })).body.data;
  const tableIds = own.desks.flatMap((desk: { tables: Array<{ id: number }> }) => desk.tables.map((table) => table.id));
  let user = 0;
  for (let index = 0; index <= extraUsers; index++) {
    user = (await api('POST', '/tenant/users', { token, body: { login: `u${index}@x.io`, nome: `User ${index}` } })).body.data.id;
  }
  let group = 0;
  let datamart = 0;
  for (let index = 0; index <= extraUsers; index++) {
    group = (await api('POST', '/tenant/groups', { token, body: { nome: `Group ${index}` } })).body.data.id;
    datamart = (await api('POST', '/tenant/datamart', { token, body: { nome: `DM ${index}`, tables: tableIds, owners: [user] } }))
      .body.data.id;
  }
  const flow = own.flows[0].id;
  const schedule = {
    header: { id: 5 + extraUsers },
    body: { nome: 'S', ativo: false, timezone: 'UTC', flows: [{ flow_etl_id: flow, context: 'full' }], triggers: [] },
  };
  await api('PUT', `/tenant/schedules/${schedule.header.id}`, { token, body: schedule });
  await api('PATCH', '/tenant/settings', { token, body: { alertChannels: { webhook: { url: 'https://hooks.example.com/x' } } } });
  let agent = 1;
  for (let index = 0; index < extraUsers; index++) {
    agent = (await api('POST', '/tenant/agents', { token, body: { nome: `agent-${index}` } })).body.data.id;
  }
  let alert = 0;
  for (let index = 0; index <= extraUsers; index++) {
    alert = (await api('POST', '/tenant/alerts', { token, body: { nome: 'A', channels: { webhook: false }, content: [] } })).body
      .data.id;
  }
  const eventDelivery = await eventLog(client, tenant.id, 2 + extraUsers);
  const rollout = await finishedRollout(client.token, templateId);
  return {
    client,
    tenant,
    agent: await agentToken(token),
    templateId,
    ids: {
      user,
      group,
      datamart,
      schedule: schedule.header.id,
      alert,
      agent,
      tenant: tenant.id,
      template: templateId,
      eventDelivery,
      rollout,
    },
    tables: tableIds,
    flows: own.flows.map((each: { id: number }) => each.id),
  };
}

/**
 * The client's events webhook, and `count` events in its log (at least two: the client's deliveries
 * are a list to page; more for a party with more of everything, so another party's ids are not its
 * own): the webhook is turned off before they are sent, so each fails at the deliverer's first look,
 * with no request made. Their cause is left out: each would be a tenant's failed run or missed slot.
 * Answers the last delivery's id, once all have failed.
 */
export async function eventLog(client: { clientId: number; token: string }, tenantId: number, count: number): Promise<number> {
  const webhook = (body: unknown) => api('PATCH', '/tenants/settings', { token: client.token, body: { webhook: body } });
  await webhook({ url: 'http://127.0.0.1:9/party-events' });
  const error = { code: 'apply_in_progress', message: 'Another apply is in progress' };
  const failed = { type: 'tenant.apply_failed', data: { tenantId, templateId: 1, version: 1, rolloutId: null, error } } as const;
  const events = await clientEventWrites(
    client.clientId,
    Array.from({ length: count }, () => failed),
  );
  await transaction<'clientEvent'>().include(events.items).commit();
  await webhook({ enabled: false });
  await events.afterCommit();
  const log = await eventually(async () => {
    const deliveries: Array<{ id: number; status: string }> = (await api('GET', '/tenants/deliveries', { token: client.token }))
      .body.data;
    return deliveries.length === count && deliveries.every((delivery) => delivery.status === 'failed') ? deliveries : undefined;
  });
  return (log[0] as { id: number }).id;
}

/**
 * A rollout of the template to every tenant that has it, once it finished (its tenants already run the
 * version: each is `unchanged`, nothing is applied), so that nothing it does changes the party later.
 */
export async function finishedRollout(clientToken: string, templateId: number): Promise<number> {
  const rollouts = `/tenants/templates/${templateId}/rollouts`;
  const started = await api('POST', rollouts, { token: clientToken, body: { tenants: 'all' } });
  if (started.status !== 202) throw new Error(`Rollout failed: ${started.status} ${JSON.stringify(started.body)}`);
  const rolloutId = started.body.data.id as number;
  await eventually(async () => {
    const rollout = await api('GET', `${rollouts}/${rolloutId}`, { token: clientToken });
    return rollout.body.data.state === 'finished' ? true : undefined;
  });
  return rolloutId;
}

/** The value of a route's path parameter taken from `owner`'s resources. */
export function pathParameterFor(route: Route, name: string, owner: Party): string {
  if (route.path.startsWith('/tenants/deliveries/')) return String(owner.ids.eventDelivery);
  if (name === 'userId') return String(owner.ids.user);
  if (name === 'groupId') return String(owner.ids.group);
  if (name === 'rolloutId') return String(owner.ids.rollout);
  if (name === 'token') return 'not-a-token';
  const area = route.path.split('/')[2] ?? '';
  const byArea: Record<string, number | undefined> = {
    users: owner.ids.user,
    groups: owner.ids.group,
    datamart: owner.ids.datamart,
    schedules: owner.ids.schedule,
    alerts: owner.ids.alert,
    templates: owner.ids.template,
    agents: owner.ids.agent,
  };
  return String(route.path.startsWith('/tenants/') && area !== 'templates' ? owner.ids.tenant : (byArea[area] ?? 1));
}

/** The path of a route, with each parameter taken from `owner`'s resources. */
export const pathFor = (route: Route, owner: Party): string =>
  route.path.replace(/\{(\w+)\}/g, (_, name: string) => pathParameterFor(route, name, owner));

/** The token a route takes, of `owner`'s. */
export const tokenFor = (route: Route, owner: Party) =>
  route.auth.includes('tenant') ? owner.tenant.token : route.auth.includes('client') ? owner.client.token : owner.agent;

/** A state snapshot of a party: everything its tokens can read. */
export async function snapshot(owner: Party) {
  const read = async (path: string, token: string) => {
    const body = (await api('GET', path, { token })).body;
    return JSON.stringify(body, (key, value) =>
      key === 'requestId' || key === 'lastSeenAt' || key === 'online' ? undefined : value,
    );
  };
  const tenant = owner.tenant.token;
  return Promise.all([
    read('/tenants', owner.client.token),
    read('/tenants/templates', owner.client.token),
    read('/tenants/settings', owner.client.token),
    read('/tenants/deliveries', owner.client.token),
    ...[
      '/tenant',
      '/tenant/users',
      '/tenant/groups',
      '/tenant/datamart',
      '/tenant/schedules',
      '/tenant/alerts',
      '/tenant/settings',
    ].map((path) => read(path, tenant)),
  ]);
}
