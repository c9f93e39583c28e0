/**
 * A client and a tenant holding `scale` times a small tenant's data, made through the API, for
 * measuring what each read route costs as the data grows (the read budget in bench/read-budget.ts,
 * and test/integration/read-round-trips.test.ts, which checks the same at 1x and 100x).
 */
import type { TemplateBundle } from '#functions/core/templates/bundle.ts';
import { clientEventWrites } from '#functions/core/events/client-events.ts';
import { transaction } from '#functions/core/store/transaction.ts';
import { tablePermission } from '#test/support/permissions.ts';

/** One API request; anything but a 2xx throws. Returns the answer's body. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- arbitrary JSON answers
export type ApiCall = (method: string, path: string, token: string, body?: unknown) => Promise<Record<string, any>>;

/** A tenant's data at a scale, and the paths of one of each of its records. */
export interface ScaledTenant {
  scale: number;
  clientToken: string;
  tenantToken: string;
  /** Path parameters that name real records: a user, a group, a datamart, a schedule, an alert, a delivery, a template, a run. */
  ids: Record<
    | 'tenant'
    | 'user'
    | 'group'
    | 'datamart'
    | 'schedule'
    | 'alert'
    | 'delivery'
    | 'template'
    | 'rollout'
    | 'eventDelivery'
    | 'run',
    number
  >;
}

/** Per unit of scale: what a small tenant has. */
export const perScale = {
  users: 3,
  groups: 2,
  datamarts: 2,
  tenants: 1,
  templates: 1,
  versions: 1,
  schedules: 1,
  alerts: 1,
  deliveries: 1,
} as const;

/** Runs `task` for 0..count-1, `parallel` at a time (the store takes a few requests at once). */
async function each(count: number, task: (index: number) => Promise<unknown>, parallel = 8): Promise<void> {
  let next = 0;
  const worker = async () => {
    for (let index = next++; index < count; index = next++) await task(index);
  };
  await Promise.all(Array.from({ length: Math.min(parallel, count) }, worker));
}

/** Three tables of two, one and one columns, the flows that fill them, a dashboard. */
function bundle(nome: string): TemplateBundle {
  return {
    nome,
    desks: [{ key: 'sales', nome: 'Sales' }],
    tables: [
      {
        key: 'orders',
        nome: 'Orders',
        desk: 'sales',
        columns: [
          { column_name: 'order_id', data_type: 'integer', label: 'Order' },
          { column_name: 'region', data_type: 'text', label: 'Region' },
        ],
      },
      { key: 'daily', nome: 'Daily sales', desk: 'sales', columns: [{ column_name: 'day', data_type: 'date', label: 'Day' }] },
      { key: 'stock', nome: 'Stock', desk: 'sales', columns: [{ column_name: 'sku', data_type: 'text', label: 'SKU' }] },
    ],
    connections: [{ key: 'erp', nome: 'ERP', kind: 'postgres' }],
    flows: [
      { key: 'load-orders', nome: 'Load orders', connection: 'erp', writes: ['orders'], context: 'full' },
      { key: 'daily-sales', nome: 'Daily', connection: 'erp', reads: ['orders'], writes: ['daily'], context: 'incremental' },
      { key: 'load-stock', nome: 'Load stock', connection: 'erp', writes: ['stock'], context: 'full' },
    ],
    applications: [{ key: 'app', nome: 'Sales', route: '/apps/sales' }],
    dashboards: [{ key: 'overview', nome: 'Overview', widgets: [{ key: 'w', nome: 'W', kind: 'chart', table: 'daily' }] }],
  };
}

const record = (tableId: number, allowed: boolean, filters: Array<{ column: string; operator: string; value: string }> = []) =>
  tablePermission(tableId, { allowed, filters });

/**
 * `scale` times: 3 users, 2 groups (each user in one), 2 datamarts over the template's tables
 * (each with an owner), a permission record per table for every user and group (on one datamart
 * each), a tenant of the client besides this one, a template (and a version of it), a schedule, an
 * alert and one delivery of it, and one run.
 */
export async function scaledTenant(call: ApiCall, clientToken: string, scale: number): Promise<ScaledTenant> {
  const count = (what: keyof typeof perScale) => perScale[what] * scale;
  const template = (await call('POST', '/tenants/templates', clientToken, bundle(`Read data ${crypto.randomUUID()}`))).data;
  const tenant = (await call('POST', '/tenants', clientToken, { nome: 'Read data', ativo: true, templateId: template.id })).data;
  const token = tenant.token as string;
  const own = (await call('GET', '/tenant', token)).data;
  const tables = (own.desks as Array<{ tables: Array<{ id: number }> }>).flatMap((desk) => desk.tables.map((table) => table.id));
  const flow = (own.flows as Array<{ id: number }>)[0]?.id as number;

  const users: number[] = [];
  const groups: number[] = [];
  const datamarts: number[] = [];
  await each(count('users'), async (index) => {
    users[index] = (
      await call('POST', '/tenant/users', token, { login: `user-${index}@read.io`, nome: `User ${index}` })
    ).data.id;
  });
  await each(count('groups'), async (index) => {
    groups[index] = (await call('POST', '/tenant/groups', token, { nome: `Group ${index}` })).data.id;
  });
  await each(count('datamarts'), async (index) => {
    const owners = [users[index % users.length] as number];
    datamarts[index] = (await call('POST', '/tenant/datamart', token, { nome: `Datamart ${index}`, tables, owners })).data.id;
  });
  await each(users.length, (index) =>
    call('PUT', `/tenant/groups/${groups[index % groups.length]}/members/${users[index]}`, token),
  );
  const permissions = tables.map((tableId, index) =>
    record(tableId, index !== 1, index === 0 ? [{ column: 'region', operator: '=', value: 'south' }] : []),
  );
  await each(users.length, (index) =>
    call('PUT', `/tenant/datamart/${datamarts[index % datamarts.length]}/user/${users[index]}`, token, { permissions }),
  );
  await each(groups.length, (index) =>
    call('PUT', `/tenant/datamart/${datamarts[index % datamarts.length]}/group/${groups[index]}`, token, { permissions }),
  );

  // What the other read routes list: the client's tenants and templates, schedules, alerts, deliveries.
  await each(count('tenants'), (index) => call('POST', '/tenants', clientToken, { nome: `Other ${index}`, ativo: true }));
  await each(count('templates') - 1, (index) =>
    call('POST', '/tenants/templates', clientToken, bundle(`Other ${crypto.randomUUID()} ${index}`)),
  );
  for (let version = 1; version < count('versions'); version++) {
    await call('PUT', `/tenants/templates/${template.id}`, clientToken, bundle(`Read data version ${version}`));
  }
  const schedules: number[] = [];
  await each(count('schedules'), async (index) => {
    const id = index + 1;
    await call('PUT', `/tenant/schedules/${id}`, token, {
      header: { id },
      body: { nome: `S${id}`, ativo: true, timezone: 'UTC', flows: [{ flow_etl_id: flow, context: 'full' }], triggers: [] },
    });
    schedules[index] = id;
  });
  const alerts: number[] = [];
  await each(count('alerts'), async (index) => {
    alerts[index] = (
      await call('POST', '/tenant/alerts', token, { nome: `A${index}`, channels: { webhook: true }, content: [] })
    ).data.id;
  });
  // A name that never resolves (RFC 6761): the deliverer's attempts fail at once, with no network.
  const webhook = (enabled: boolean) => ({ alertChannels: { webhook: { url: 'https://hooks.invalid/read', enabled } } });
  await call('PATCH', '/tenant/settings', token, webhook(true));
  const deliveries: number[] = [];
  await each(count('deliveries'), async (index) => {
    deliveries[index] = (await call('POST', `/tenant/alerts/${alerts[0]}/send`, token, { user: { id: users[0] } })).data.id;
  });
  // Paused, so that the deliverer's retries stop and leave the measurements alone.
  await call('PATCH', '/tenant/settings', token, webhook(false));
  const [rollout, eventDelivery] = [await finishedRollout(call, clientToken, template.id), await failedEvent(call, clientToken)];
  const run = await dispatchedRun(call, token, flow);
  return {
    scale,
    clientToken,
    tenantToken: token,
    ids: {
      tenant: tenant.id as number,
      user: users[0] as number,
      group: groups[0] as number,
      datamart: datamarts[0] as number,
      schedule: schedules[0] as number,
      alert: alerts[0] as number,
      delivery: deliveries[0] as number,
      template: template.id as number,
      rollout,
      eventDelivery,
      run,
    },
  };
}

/** Polls `read` every 100 ms until it answers a value (the workers run beside the bench). */
export async function until<T>(read: () => Promise<T | undefined>): Promise<T> {
  for (;;) {
    const value = await read();
    if (value !== undefined) return value;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/** One run of the flow: its load queued for the default agent (online once it beats), then made a run by the reload worker. */
async function dispatchedRun(call: ApiCall, tenantToken: string, flowId: number): Promise<number> {
  const agent = (await call('POST', '/tenant/agents/1/token', tenantToken)).data.token as string;
  await call('POST', '/agent/heartbeat', agent);
  await call('POST', '/tenant/templates/reload', tenantToken, { items: [{ flowId, tokenId: 1, context: 'full' }] });
  return until(async () => ((await call('GET', '/tenant/runs', tenantToken)).data as Array<{ id: number }>)[0]?.id);
}

/** One rollout of the template, finished (its tenant runs the version already: unchanged, nothing applied). */
async function finishedRollout(call: ApiCall, clientToken: string, templateId: number): Promise<number> {
  const rollouts = `/tenants/templates/${templateId}/rollouts`;
  const id = (await call('POST', rollouts, clientToken, { tenants: 'all' })).data.id as number;
  await until(async () => ((await call('GET', `${rollouts}/${id}`, clientToken)).data.state === 'finished' ? true : undefined));
  return id;
}

/**
 * One event in the client's delivery log: its webhook is turned off before the event is sent, so the
 * delivery fails at the deliverer's first look, with no request made.
 */
async function failedEvent(call: ApiCall, clientToken: string): Promise<number> {
  const { clientId } = (await call('GET', '/whoami', clientToken)).data as { clientId: number };
  // Enabled whatever an earlier call left (the rollout's events webhook, a previous event's pause).
  await call('PATCH', '/tenants/settings', clientToken, { webhook: { url: 'https://hooks.invalid/read-events', enabled: true } });
  const error = { code: 'apply_in_progress', message: 'Another apply is in progress' };
  const events = await clientEventWrites(clientId, [
    { type: 'tenant.apply_failed', data: { tenantId: 1, templateId: 1, version: 1, rolloutId: null, error } },
  ]);
  await transaction<'clientEvent'>().include(events.items).commit();
  await call('PATCH', '/tenants/settings', clientToken, { webhook: { enabled: false } });
  await events.afterCommit();
  return until(async () => {
    const [delivery] = (await call('GET', '/tenants/deliveries', clientToken)).data as Array<{ id: number; status: string }>;
    return delivery?.status === 'failed' ? delivery.id : undefined;
  });
}
