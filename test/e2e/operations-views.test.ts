/**
 * The operations views through the shared twin: the tenant's runs filtered by status, agent and
 * flow, one run read, a failed run retried; the users by login, the client's tenants by name and
 * activity, the client's event deliveries by status. Each filter is exact, pages as its list does,
 * refuses a bad value with a 400 naming it, and never shows another tenant's or client's data.
 */
import { randomUUID } from 'node:crypto';
import { beforeAll, describe, expect, test } from 'vitest';
import { recordDispatchedRun } from '#functions/core/reload/runs.ts';
import { api, expectErrorEnvelope, getOk, newClient, newTenant } from '#test/support/api.ts';
import { eventLog } from '#test/support/party.ts';
import { tenantWithFlows } from '#test/support/schedules.ts';
import { agentToken, eventually } from '#test/support/templates.ts';

type Run = { id: number; flowId: number; tokenId: number; status: string; retryOf?: number; batchId: string };

/** Every item of a list, walked page by page with `limit` (the query string holds the filters). */
async function walk(path: string, token: string, limit: number): Promise<Array<{ id: number }>> {
  const items: Array<{ id: number }> = [];
  let cursor: string | null = null;
  const joiner = path.includes('?') ? '&' : '?';
  do {
    const after: string = cursor === null ? '' : `&cursor=${encodeURIComponent(cursor)}`;
    const page = await getOk(`${path}${joiner}limit=${limit}${after}`, token);
    items.push(...page.body.data);
    cursor = page.body.nextCursor;
  } while (cursor !== null);
  return items;
}

const ids = (items: Array<{ id: number }>) => items.map((item) => item.id);

/** A 400 `invalid_query_parameter` naming the parameter. */
function expectRefused(answer: Awaited<ReturnType<typeof api>>, parameter: string) {
  const body = expectErrorEnvelope(answer, 400);
  expect(body.code, parameter).toBe('invalid_query_parameter');
  expect(body.errors.map((error: { pointer: string }) => error.pointer)).toEqual([`/${parameter}`]);
}

describe("the tenant's runs", () => {
  let tenant: { id: number; token: string };
  let client: { token: string };
  let flows: Record<string, number>;
  let agent: string;
  /** The runs of one reload of every flow, newest first: reported failed, succeeded and running. */
  let runs: Run[];

  beforeAll(async () => {
    ({ client, tenant, flows } = await tenantWithFlows());
    agent = await agentToken(tenant.token);
    // An agent that has not beaten is offline, and its loads are skipped.
    expect((await api('POST', '/agent/heartbeat', { token: agent })).status).toBe(200);
    const items = Object.values(flows).map((flowId) => ({ flowId, tokenId: 1, context: 'full' }));
    expect((await api('POST', '/tenant/templates/reload', { token: tenant.token, body: { items } })).status).toBe(200);
    const dispatched = await eventually(async () => {
      const listed: Run[] = (await getOk('/tenant/runs', tenant.token)).body.data;
      return listed.length === items.length ? listed : undefined;
    });
    const outcomes = ['failed', 'succeeded', 'running'];
    for (const [index, run] of dispatched.entries()) {
      const report = await api('POST', `/agent/runs/${run.id}`, { token: agent, body: { status: outcomes[index] } });
      expect(report.status).toBe(200);
    }
    runs = (await getOk('/tenant/runs', tenant.token)).body.data;
    expect(runs.map((run) => run.status)).toEqual(outcomes);
  });

  test('filtered by status, agent and flow (all given must match), and paged with a filter', async () => {
    const [failed, succeeded] = runs as [Run, Run, Run];
    const listed = async (query: string) => ids((await getOk(`/tenant/runs?${query}`, tenant.token)).body.data);
    expect(await listed('status=failed')).toEqual([failed.id]);
    expect(await listed('status=succeeded')).toEqual([succeeded.id]);
    expect(await listed('status=dispatched')).toEqual([]);
    expect(await listed(`flowId=${failed.flowId}`)).toEqual([failed.id]);
    expect(await listed(`status=failed&flowId=${succeeded.flowId}`)).toEqual([]);
    expect(await listed('agent=1')).toEqual(ids(runs));
    expect(await listed('agent=2')).toEqual([]);
    expect(await listed(`agent=1&status=failed&flowId=${failed.flowId}`)).toEqual([failed.id]);
    // Pages of one, walked by nextCursor: every run once, newest first, as the unfiltered list has them.
    expect(ids(await walk('/tenant/runs?agent=1', tenant.token, 1))).toEqual(ids(runs));
    expect(ids(await walk('/tenant/runs?status=running', tenant.token, 1))).toEqual([runs[2]?.id]);
  });

  test('a bad filter is a 400 naming it', async () => {
    for (const [query, parameter] of [
      ['status=done', 'status'],
      ['status=', 'status'],
      ['agent=0', 'agent'],
      ['agent=x', 'agent'],
      ['flowId=-1', 'flowId'],
      ['flowId=1e3', 'flowId'],
      ['flowId=1000000', 'flowId'],
    ] as const) {
      expectRefused(await api('GET', `/tenant/runs?${query}`, { token: tenant.token }), parameter);
    }
    expect(expectErrorEnvelope(await api('GET', '/tenant/runs?agentId=1', { token: tenant.token }), 400).code).toBe(
      'unknown_query_parameter',
    );
  });

  test("one run is read by id; a missing one and another tenant's are 404 run_not_found", async () => {
    for (const run of runs) expect((await getOk(`/tenant/runs/${run.id}`, tenant.token)).body.data).toEqual(run);
    expect(expectErrorEnvelope(await api('GET', '/tenant/runs/999999', { token: tenant.token }), 404).code).toBe('run_not_found');
    const stranger = await newTenant((await newClient()).token);
    for (const run of runs) {
      expect(expectErrorEnvelope(await api('GET', `/tenant/runs/${run.id}`, { token: stranger.token }), 404).code).toBe(
        'run_not_found',
      );
    }
    expect((await getOk(`/tenant/runs?flowId=${runs[0]?.flowId}`, stranger.token)).body.data).toEqual([]);
  });

  test('a failed run is retried: its load queued again, made a run that names it; the same Idempotency-Key replays', async () => {
    const [failed, succeeded, running] = runs as [Run, Run, Run];
    const retry = (id: number, headers: Record<string, string> = {}) =>
      api('POST', `/tenant/runs/${id}/retry`, { token: tenant.token, headers });
    const headers = { 'idempotency-key': randomUUID() };
    const first = await retry(failed.id, headers);
    expect(first.status).toBe(202);
    expect(first.body.data).toEqual({
      retryOf: failed.id,
      flowId: failed.flowId,
      tokenId: 1,
      context: 'full',
      batchId: expect.any(String),
      status: 'enqueued',
    });
    const replayed = await retry(failed.id, headers);
    expect(replayed.status).toBe(202);
    expect(replayed.headers.get('idempotent-replayed')).toBe('true');
    expect(replayed.body.data).toEqual(first.body.data);
    const retriesOf = async (count: number) =>
      eventually(async () => {
        const listed: Run[] = (await getOk(`/tenant/runs?flowId=${failed.flowId}`, tenant.token)).body.data;
        const retries = listed.filter((run) => run.retryOf === failed.id);
        return retries.length === count ? retries : undefined;
      });
    const [again] = (await retriesOf(1)) as [Run];
    expect(await getOk(`/tenant/runs/${again.id}`, tenant.token).then((answer) => answer.body.data)).toMatchObject({
      id: again.id,
      flowId: failed.flowId,
      tokenId: 1,
      context: 'full',
      status: 'dispatched',
      batchId: first.body.data.batchId,
      retryOf: failed.id,
    });
    // The failed run stays as it was; without a key, each retry queues one more load.
    expect((await getOk(`/tenant/runs/${failed.id}`, tenant.token)).body.data).toEqual(failed);
    expect((await retry(failed.id)).status).toBe(202);
    await retriesOf(2);

    for (const run of [succeeded, running, again]) {
      const refused = expectErrorEnvelope(await retry(run.id), 409);
      expect(refused.code).toBe('run_not_failed');
      expect(refused.message).toBe(`Only a failed run can be retried; this one is ${run.status}`);
    }
    expect(expectErrorEnvelope(await retry(999_999), 404).code).toBe('run_not_found');
    const stranger = await newTenant((await newClient()).token);
    const theirs = await api('POST', `/tenant/runs/${failed.id}/retry`, { token: stranger.token });
    expect(expectErrorEnvelope(theirs, 404).code).toBe('run_not_found');
  });

  test('a run of an agent that is offline, or of an inactive tenant, is not retried: 409, nothing queued', async () => {
    const created = await api('POST', '/tenant/agents', { token: tenant.token, body: { nome: 'offline' } });
    expect(created.status).toBe(201);
    const { id: agentId, token } = created.body.data;
    // A run of the new agent, written as the reload worker writes one (a reload would skip an agent that never beat).
    const flowId = Object.values(flows)[0] as number;
    const load = { tenantId: tenant.id, agentId, flowId, context: 'full', requestedAt: new Date().toISOString() };
    const batchId = randomUUID();
    expect(await recordDispatchedRun({ ...load, batchId, deduplicationId: `${batchId}-${flowId}` })).toBe('recorded');
    const [run] = (await getOk(`/tenant/runs?agent=${agentId}`, tenant.token)).body.data as [Run];
    expect((await api('POST', `/agent/runs/${run.id}`, { token, body: { status: 'failed' } })).status).toBe(200);
    const offline = expectErrorEnvelope(await api('POST', `/tenant/runs/${run.id}/retry`, { token: tenant.token }), 409);
    expect(offline.code).toBe('agent_offline');
    expect(offline.message).toMatch(new RegExp(`^Agent ${agentId} is offline`));

    expect((await api('POST', `/tenants/${tenant.id}/deactivate`, { token: client.token })).status).toBe(200);
    const failed = runs[0] as Run;
    const inactive = await api('POST', `/tenant/runs/${failed.id}/retry`, { token: tenant.token });
    expect(expectErrorEnvelope(inactive, 409).code).toBe('tenant_inactive');
    expect((await getOk(`/tenant/runs?agent=${agentId}`, tenant.token)).body.data).toHaveLength(1);
  });
});

describe('exact filters of the directory and of the client', () => {
  test('GET /tenant/users?login= reads the one user with that login, as logins are claimed; bad values are 400', async () => {
    const { token } = await newTenant((await newClient()).token);
    const create = (login: string) => api('POST', '/tenant/users', { token, body: { login, nome: login } });
    const ana = (await create('Ana.Lima@Acme.io')).body.data;
    await create('bia@acme.io');
    const other = await newTenant((await newClient()).token);
    await api('POST', '/tenant/users', { token: other.token, body: { login: 'carla@acme.io', nome: 'Carla' } });

    const byLogin = async (login: string, more = '') =>
      (await getOk(`/tenant/users?login=${encodeURIComponent(login)}${more}`, token)).body;
    const whole = (await getOk('/tenant/users', token)).body.data;
    const listed = whole.find((user: { id: number }) => user.id === ana.id);
    // The user as the whole list shows them, found by their login however a reader could spell it.
    for (const spelling of ['Ana.Lima@Acme.io', 'ana.lima@acme.io', 'ANA.LIMA@ACME.IO', 'Ａｎａ.Lima@Acme.io']) {
      expect(await byLogin(spelling), spelling).toEqual({ status: 'success', data: [listed] });
    }
    expect(await byLogin('ana.lima@acme.io', '&limit=5')).toEqual({ status: 'success', data: [listed], nextCursor: null });
    expect((await byLogin('nobody@acme.io')).data).toEqual([]);
    expect((await byLogin('ana.lima')).data).toEqual([]);
    // Another tenant's login is no user of this one.
    expect((await byLogin('carla@acme.io')).data).toEqual([]);

    const refused = (query: string) => api('GET', `/tenant/users?${query}`, { token });
    expectRefused(await refused('login='), 'login');
    expectRefused(await refused(`login=${'a'.repeat(201)}`), 'login');
    const page = (await getOk('/tenant/users?limit=1', token)).body;
    expectRefused(await refused(`login=bia@acme.io&cursor=${encodeURIComponent(page.nextCursor)}`), 'cursor');
  });

  test('GET /tenants?nome=&ativo= are exact, the name compared as names are; paged with a filter; bad values are 400', async () => {
    const client = await newClient();
    const [active, inactive, spaced, beta] = [
      await newTenant(client.token, { nome: 'Acme Ltda' }),
      await newTenant(client.token, { nome: 'ACME LTDA', ativo: false }),
      await newTenant(client.token, { nome: 'acme  ltda' }),
      await newTenant(client.token, { nome: 'Beta' }),
    ];
    const stranger = await newClient();
    await newTenant(stranger.token, { nome: 'Acme Ltda' });
    const listed = async (query: string) => ids((await getOk(`/tenants?${query}`, client.token)).body.data);
    const acme = [active.id, inactive.id, spaced.id];
    expect(await listed(`nome=${encodeURIComponent('Acme Ltda')}`)).toEqual(acme);
    expect(await listed(`nome=${encodeURIComponent('acme ltda')}&ativo=true`)).toEqual([active.id, spaced.id]);
    expect(await listed('ativo=false')).toEqual([inactive.id]);
    expect(await listed('ativo=true')).toEqual([active.id, spaced.id, beta.id]);
    expect(await listed('nome=Acme')).toEqual([]);
    expect(await listed('nome=beta&ativo=false')).toEqual([]);
    expect(ids(await walk(`/tenants?nome=${encodeURIComponent('ACME ltda')}`, client.token, 1))).toEqual(acme);
    // The stranger's own tenant, never this client's.
    expect((await getOk('/tenants?nome=Acme%20Ltda', stranger.token)).body.data).toHaveLength(1);

    for (const [query, parameter] of [
      ['ativo=yes', 'ativo'],
      ['ativo=1', 'ativo'],
      ['ativo=', 'ativo'],
      ['ativo=True', 'ativo'],
      ['nome=', 'nome'],
      [`nome=${'x'.repeat(201)}`, 'nome'],
    ] as const) {
      expectRefused(await api('GET', `/tenants?${query}`, { token: client.token }), parameter);
    }
  });

  test("GET /tenants/deliveries?status= lists the client's event deliveries of that status", async () => {
    const client = await newClient();
    const tenant = await newTenant(client.token);
    // Three events, failed at the deliverer's first look (the webhook was off when they were sent).
    await eventLog(client, tenant.id, 3);
    const all = ids((await getOk('/tenants/deliveries', client.token)).body.data);
    expect(all).toHaveLength(3);
    expect(ids((await getOk('/tenants/deliveries?status=failed', client.token)).body.data)).toEqual(all);
    expect((await getOk('/tenants/deliveries?status=delivered', client.token)).body.data).toEqual([]);
    expect(ids(await walk('/tenants/deliveries?status=failed', client.token, 2))).toEqual(all);
    expectRefused(await api('GET', '/tenants/deliveries?status=gone', { token: client.token }), 'status');
  });
});
