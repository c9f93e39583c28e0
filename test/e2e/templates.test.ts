import { describe, expect, test } from 'vitest';
import { api, expectErrorEnvelope, newClient, newTenant } from '#test/support/api.ts';
import { agentToken, eventually, publish, retailBundle } from '#test/support/templates.ts';

const json = (token: string, body: unknown) => ({ token, body });

describe('the template story, end to end', () => {
  test('publish, create with it, heartbeat, apply, reload the plan in dependency order, agent reports', async () => {
    const client = await newClient();
    const templateId = await publish(client.token, retailBundle());
    const tenant = await newTenant(client.token, { templateId, development_variables: { WAREHOUSE: 'north' } });
    expect(Object.keys(tenant).sort()).toEqual(['ativo', 'dominio', 'id', 'nome', 'token']);

    const own = (await api('GET', '/tenant', { token: tenant.token })).body.data;
    expect(own.template).toMatchObject({ id: templateId, version: 1 });
    expect(own.applications).toEqual([{ id: expect.any(Number), key: 'sales-app', nome: 'Sales', route: '/apps/sales' }]);
    expect(own.desks).toHaveLength(1);
    expect(own.desks[0].tables.map((table: { key: string }) => table.key)).toEqual(['orders', 'daily', 'stock']);

    const agent = await agentToken(tenant.token);
    const idle = (await api('POST', '/agent/heartbeat', { token: agent })).body.data;
    expect(idle.runs).toEqual([]);
    expect(idle).not.toHaveProperty('variables');

    // The apply on creation handed no plan to anyone, so the first apply delivers it.
    const applied = await api('POST', '/tenant/templates/apply', json(tenant.token, { templateId }));
    expect(applied.status).toBe(200);
    expect(Object.keys(applied.body)).toEqual(['success', 'reloadPlan']);
    const plan = applied.body.reloadPlan as Array<{ flowId: number; tokenId: number; context: string }>;
    expect(plan).toHaveLength(3);
    expect(plan.map((item) => Object.keys(item).sort())).toEqual(Array(3).fill(['context', 'flowId', 'tokenId']));
    // load-orders (full) must come before daily-sales (incremental), which reads what it writes.
    const contexts = plan.map((item) => item.context);
    expect(contexts.indexOf('full')).toBeLessThan(contexts.indexOf('incremental'));
    // No agent named `warehouse` yet: every flow runs on the default agent (tokenId 1).
    expect(new Set(plan.map((item) => item.tokenId))).toEqual(new Set([1]));

    const again = await api('POST', '/tenant/templates/apply', json(tenant.token, { templateId }));
    expect(again.body).toEqual({ success: true, reloadPlan: [] });

    const reload = await api('POST', '/tenant/templates/reload', json(tenant.token, { items: plan }));
    expect(reload.status).toBe(200);
    expect(reload.body).toEqual({
      success: true,
      results: plan.map((item) => ({
        tokenId: 1,
        tenantId: tenant.id,
        status: 'enqueued',
        flowId: item.flowId,
        context: item.context,
      })),
    });

    const beat = await eventually(async () => {
      const data = (await api('POST', '/agent/heartbeat', { token: agent })).body.data;
      return data.runs.length === 3 ? data : undefined;
    });
    const dispatched = beat.runs;
    // Dispatched in dependency order on the agent's FIFO group: the run ids follow the plan's order.
    expect(dispatched.map((run: { flowId: number }) => run.flowId)).toEqual(plan.map((item) => item.flowId));
    // The variables come once per beat, for all its runs.
    expect(beat.variables).toEqual({ WAREHOUSE: 'north' });
    expect(dispatched.some((run: object) => 'variables' in run)).toBe(false);
    // Runs keep no copy of the variables: the agent gets the tenant's as they are when it takes a run.
    const patched = await api(
      'PATCH',
      `/tenants/${tenant.id}`,
      json(client.token, { development_variables: { WAREHOUSE: 'south' } }),
    );
    expect(patched.status).toBe(200);
    const taken = (await api('POST', '/agent/heartbeat', { token: agent })).body.data;
    expect(taken.runs).toHaveLength(3);
    expect(taken.variables).toEqual({ WAREHOUSE: 'south' });

    for (const run of dispatched) {
      expect((await api('POST', `/agent/runs/${run.id}`, json(agent, { status: 'running' }))).status).toBe(200);
      const done = await api('POST', `/agent/runs/${run.id}`, json(agent, { status: 'succeeded', message: 'ok' }));
      expect(done.body.data).toMatchObject({ id: run.id, status: 'succeeded', message: 'ok' });
    }
    const drained = (await api('POST', '/agent/heartbeat', { token: agent })).body.data;
    expect(drained.runs).toEqual([]);
    expect(drained).not.toHaveProperty('variables');
    const runs = (await api('GET', '/tenant/runs', { token: tenant.token })).body.data;
    expect(runs.map((run: { status: string }) => run.status)).toEqual(['succeeded', 'succeeded', 'succeeded']);

    const finished = dispatched[0].id;
    const late = expectErrorEnvelope(await api('POST', `/agent/runs/${finished}`, json(agent, { status: 'failed' })), 409);
    expect(late.code).toBe('run_finished');
  });

  test('v2 changes one table and adds a resource: ids kept, overwritten, nothing removed, plan = the rebuilt table', async () => {
    const client = await newClient();
    const v1 = retailBundle();
    const templateId = await publish(client.token, v1);
    const tenant = await newTenant(client.token, { templateId });
    const firstPlan = (await api('POST', '/tenant/templates/apply', json(tenant.token, { templateId }))).body.reloadPlan;
    const before = (await api('GET', '/tenant', { token: tenant.token })).body.data;

    const v2 = retailBundle();
    v2.nome = 'Retail v2';
    // `daily` is rebuilt (a new column); `orders` only gets a new label: overwritten, not rebuilt.
    v2.tables = v2.tables?.map((table) =>
      table.key === 'daily'
        ? { ...table, columns: [...table.columns, { column_name: 'revenue', data_type: 'decimal', label: 'Revenue' }] }
        : table.key === 'orders'
          ? { ...table, nome: 'All orders', columns: table.columns.map((column) => ({ ...column, label: `${column.label}!` })) }
          : table,
    );
    v2.applications = [...(v2.applications ?? []), { key: 'stock-app', nome: 'Stock', route: '/apps/stock' }];
    // `load-stock` is left out of v2: it must stay in the tenant.
    v2.flows = v2.flows?.filter((flow) => flow.key !== 'load-stock');
    v2.tables = v2.tables?.filter((table) => table.key !== 'stock');
    const republished = await api('PUT', `/tenants/templates/${templateId}`, json(client.token, v2));
    expect(republished.body.data).toEqual({ id: templateId, nome: 'Retail v2', version: 2 });

    const applied = await api('POST', '/tenant/templates/apply', json(tenant.token, { templateId }));
    const dailySales = firstPlan.find((item: { context: string }) => item.context === 'incremental');
    expect(applied.body.reloadPlan).toEqual([dailySales]);

    const after = (await api('GET', '/tenant', { token: tenant.token })).body.data;
    expect(after.template).toMatchObject({ id: templateId, version: 2 });
    const tablesBefore = before.desks[0].tables;
    const tablesAfter = after.desks[0].tables;
    expect(tablesAfter.map((table: { id: number }) => table.id)).toEqual(tablesBefore.map((table: { id: number }) => table.id));
    expect(tablesAfter.find((table: { key: string }) => table.key === 'orders').nome).toBe('All orders');
    expect(tablesAfter.find((table: { key: string }) => table.key === 'stock')).toBeDefined();
    expect(after.applications.map((app: { key: string }) => app.key)).toEqual(['sales-app', 'stock-app']);
    expect(after.applications[0].id).toBe(before.applications[0].id);

    // Every flow of v1, load-stock included, still exists: the whole first plan is still a valid reload.
    const reload = await api('POST', '/tenant/templates/reload', json(tenant.token, { items: firstPlan }));
    expect(reload.status).toBe(200);
    // Nobody heartbeats this tenant's agent: every load is skipped, none is an error.
    expect(reload.body.results.map((result: { status: string }) => result.status)).toEqual([
      'skipped_offline',
      'skipped_offline',
      'skipped_offline',
    ]);
  });
});

describe('reload (spec 4.5)', () => {
  test('an offline agent is skipped_offline while an online one is enqueued, in one batch, results in request order', async () => {
    const client = await newClient();
    const templateId = await publish(client.token, retailBundle());
    const tenant = await newTenant(client.token, { templateId });
    // An agent filling the `warehouse` slot: from now on load-stock plans onto it.
    const warehouse = await api('POST', '/tenant/agents', json(tenant.token, { nome: 'warehouse' }));
    expect(warehouse.status).toBe(201);
    expect(warehouse.body.data).toMatchObject({ id: 2, nome: 'warehouse', token: expect.stringMatching(/^agt_/) });
    const plan = (await api('POST', '/tenant/templates/apply', json(tenant.token, { templateId }))).body.reloadPlan;
    expect(plan.map((item: { tokenId: number }) => item.tokenId).sort()).toEqual([1, 1, 2]);

    await api('POST', '/agent/heartbeat', { token: warehouse.body.data.token });
    const agents = (await api('GET', '/tenant/agents', { token: tenant.token })).body.data;
    const unused = { currentToken: { lastUsedAt: null }, previousToken: null };
    expect(agents).toEqual([
      { id: 1, nome: 'default', default: true, online: false, lastSeenAt: null, ...unused },
      {
        id: 2,
        nome: 'warehouse',
        default: false,
        online: true,
        lastSeenAt: expect.any(String),
        currentToken: { lastUsedAt: expect.any(String) },
        previousToken: null,
      },
    ]);

    const reversed = [...plan].reverse();
    const reload = await api('POST', '/tenant/templates/reload', json(tenant.token, { items: reversed }));
    expect(reload.body.results).toEqual(
      reversed.map((item: { tokenId: number; flowId: number; context: string }) => ({
        tokenId: item.tokenId,
        tenantId: tenant.id,
        status: item.tokenId === 2 ? 'enqueued' : 'skipped_offline',
        flowId: item.flowId,
        context: item.context,
      })),
    );
    const runs = await eventually(async () => {
      const pending = (await api('POST', '/agent/heartbeat', { token: warehouse.body.data.token })).body.data.runs;
      return pending.length === 1 ? pending : undefined;
    });
    expect(runs[0].flowId).toBe(plan.find((item: { tokenId: number }) => item.tokenId === 2).flowId);
  });

  test('every item is checked first: unknown flows or agents are a 400 naming them, and nothing is queued', async () => {
    const client = await newClient();
    const templateId = await publish(client.token, retailBundle());
    const tenant = await newTenant(client.token, { templateId });
    const other = await newTenant(client.token, { templateId });
    const agent = await agentToken(tenant.token);
    await api('POST', '/agent/heartbeat', { token: agent });
    const plan = (await api('POST', '/tenant/templates/apply', json(tenant.token, { templateId }))).body.reloadPlan;
    const otherPlan = (await api('POST', '/tenant/templates/apply', json(other.token, { templateId }))).body.reloadPlan;

    const items = [plan[0], { ...plan[1], flowId: 999999 }, { ...plan[2], tokenId: 77 }];
    const error = expectErrorEnvelope(await api('POST', '/tenant/templates/reload', json(tenant.token, { items })), 400);
    expect(error.errors.map((field: { pointer: string }) => field.pointer)).toEqual(['/items/1/flowId', '/items/2/tokenId']);
    // Another tenant's flows are as unknown as made-up ones (their ids may coincide with ours, so use one that cannot).
    expect(otherPlan).toHaveLength(3);

    await new Promise((resolve) => setTimeout(resolve, 1500));
    const idle = (await api('POST', '/agent/heartbeat', { token: agent })).body.data;
    expect(idle.runs).toEqual([]);
    expect(idle).not.toHaveProperty('variables');
    for (const body of [
      {},
      { items: [] },
      { items: [{ flowId: 1, tokenId: 1 }] },
      { items: [{ flowId: 'x', tokenId: 1, context: 'full' }] },
    ]) {
      expectErrorEnvelope(await api('POST', '/tenant/templates/reload', json(tenant.token, body)), 400);
    }
  });

  test("an inactive tenant can neither apply nor reload (409); a deleted one is gone (404; its agents' tokens 401)", async () => {
    const client = await newClient();
    const templateId = await publish(client.token, retailBundle());
    const tenant = await newTenant(client.token, { templateId, ativo: false });
    // Spec 3: applying needs an active tenant, so the template chosen at creation waits for activation.
    expect((await api('GET', '/tenant', { token: tenant.token })).body.data).toMatchObject({
      template: null,
      pendingTemplateId: templateId,
    });
    const apply = expectErrorEnvelope(await api('POST', '/tenant/templates/apply', json(tenant.token, { templateId })), 409);
    expect(apply).toMatchObject({ code: 'tenant_inactive', message: 'Tenant is inactive' });
    const items = [{ flowId: 1, tokenId: 1, context: 'full' }];
    expectErrorEnvelope(await api('POST', '/tenant/templates/reload', json(tenant.token, { items })), 409);

    const agent = await agentToken(tenant.token);
    await api('DELETE', '/tenants', json(client.token, { id: tenant.id }));
    expectErrorEnvelope(await api('POST', '/tenant/templates/apply', json(tenant.token, { templateId })), 404);
    expectErrorEnvelope(await api('POST', '/agent/heartbeat', { token: agent }), 401);
  });

  test('a tenant created inactive with a template gets it when activated, and its first apply plans it', async () => {
    const client = await newClient();
    const templateId = await publish(client.token, retailBundle());
    const tenant = await newTenant(client.token, { templateId, ativo: false });
    const activated = await api('POST', `/tenants/${tenant.id}/activate`, { token: client.token });
    expect(activated.body.data).toMatchObject({ ativo: true, pendingTemplateId: null });
    const own = (await api('GET', '/tenant', { token: tenant.token })).body.data;
    expect(own.template).toMatchObject({ id: templateId, version: 1 });
    expect(own.flows.length).toBeGreaterThan(0);
    const apply = await api('POST', '/tenant/templates/apply', json(tenant.token, { templateId }));
    expect(apply.body.reloadPlan).toHaveLength(own.flows.length);
  });
});

describe('the template catalogue', () => {
  test('publishing the latest version again (a retry whose answer was lost) makes no new version', async () => {
    const client = await newClient();
    const templateId = await publish(client.token, retailBundle());
    const next = { ...retailBundle(), nome: 'Retail 2' };
    const first = await api('PUT', `/tenants/templates/${templateId}`, json(client.token, next));
    const again = await api('PUT', `/tenants/templates/${templateId}`, json(client.token, next));
    expect(first.body.data).toEqual({ id: templateId, nome: 'Retail 2', version: 2 });
    expect(again.body.data).toEqual(first.body.data);
    const history = (await api('GET', `/tenants/templates/${templateId}`, { token: client.token })).body.data.versions;
    expect(history.map((entry: { version: number }) => entry.version)).toEqual([1, 2]);
  });

  test('GET /tenants/templates lists exactly {id, nome} of this client; GET one shows its history', async () => {
    const client = await newClient();
    const other = await newClient();
    const first = await publish(client.token, retailBundle());
    const second = await publish(client.token, { nome: 'Empty' });
    await publish(other.token, { nome: 'Not yours' });
    await api('PUT', `/tenants/templates/${first}`, json(client.token, { ...retailBundle(), nome: 'Retail 2' }));

    const list = await api('GET', '/tenants/templates', { token: client.token });
    expect(list.body).toEqual({
      status: 'success',
      data: [
        { id: first, nome: 'Retail 2' },
        { id: second, nome: 'Empty' },
      ],
    });
    const shown = (await api('GET', `/tenants/templates/${first}`, { token: client.token })).body.data;
    expect(shown).toMatchObject({ id: first, nome: 'Retail 2', version: 2, bundle: { nome: 'Retail 2' } });
    expect(shown.versions).toEqual([
      { version: 1, nome: 'Retail', publishedAt: expect.any(String), resources: 11 },
      { version: 2, nome: 'Retail 2', publishedAt: expect.any(String), resources: 11 },
    ]);
  });

  test("another client's template is 404 everywhere: show, publish, default, apply, create", async () => {
    const client = await newClient();
    const intruder = await newClient();
    const templateId = await publish(client.token, retailBundle());
    const intruderTenant = await newTenant(intruder.token);
    const notFound = async (answer: Promise<Parameters<typeof expectErrorEnvelope>[0]>) =>
      expect(expectErrorEnvelope(await answer, 404).message).toBe('Template not found');
    await notFound(api('GET', `/tenants/templates/${templateId}`, { token: intruder.token }));
    await notFound(api('PUT', `/tenants/templates/${templateId}`, json(intruder.token, retailBundle())));
    await notFound(api('PUT', '/tenants/templates/default', json(intruder.token, { templateId })));
    await notFound(api('POST', '/tenant/templates/apply', json(intruderTenant.token, { templateId })));
    await notFound(api('POST', '/tenants', json(intruder.token, { nome: 'X', ativo: true, templateId })));
    expect((await api('GET', `/tenants/templates/${templateId}`, { token: client.token })).body.data.version).toBe(1);
  });

  test('a flow cycle, a duplicate key or a dangling reference is refused at publish with the keys named', async () => {
    const client = await newClient();
    const cyclic = retailBundle();
    cyclic.flows = [
      ...(cyclic.flows ?? []).filter((flow) => flow.key !== 'load-orders'),
      { key: 'load-orders', nome: 'Load orders', connection: 'erp', reads: ['daily'], writes: ['orders'], context: 'full' },
    ];
    const cycle = expectErrorEnvelope(await api('POST', '/tenants/templates', json(client.token, cyclic)), 400);
    expect(cycle.code).toBe('invalid_template');
    expect(cycle.message).toMatch(/daily-sales/);
    expect(cycle.message).toMatch(/load-orders/);

    const duplicate = retailBundle();
    duplicate.desks = [...(duplicate.desks ?? []), { key: 'sales', nome: 'Again' }];
    const dup = expectErrorEnvelope(await api('POST', '/tenants/templates', json(client.token, duplicate)), 400);
    expect(dup.errors).toContainEqual(
      expect.objectContaining({ pointer: '/desks/1/key', message: expect.stringContaining('"sales"') }),
    );

    const dangling = retailBundle();
    dangling.flows = [{ key: 'f', nome: 'F', connection: 'nowhere', writes: ['ghost'], context: 'full' }];
    const refs = expectErrorEnvelope(await api('POST', '/tenants/templates', json(client.token, dangling)), 400);
    expect(refs.errors.map((field: { pointer: string }) => field.pointer)).toEqual(['/flows/0/connection', '/flows/0/writes/0']);
    expect((await api('GET', '/tenants/templates', { token: client.token })).body.data).toEqual([]);
  });

  test('a template and its next versions can be published as YAML', async () => {
    const client = await newClient();
    const yaml = [
      'nome: From YAML',
      'desks:',
      '  - key: ops',
      '    nome: Operations',
      'applications:',
      '  - {key: ops-app, nome: Ops, route: /apps/ops}',
    ].join('\n');
    const answer = await api('POST', '/tenants/templates', {
      token: client.token,
      rawBody: yaml,
      headers: { 'content-type': 'application/yaml' },
    });
    expect(answer.status).toBe(201);
    const shown = (await api('GET', `/tenants/templates/${answer.body.data.id}`, { token: client.token })).body.data;
    expect(shown.bundle).toEqual({
      nome: 'From YAML',
      desks: [{ key: 'ops', nome: 'Operations' }],
      applications: [{ key: 'ops-app', nome: 'Ops', route: '/apps/ops' }],
    });
    const next = await api('PUT', `/tenants/templates/${answer.body.data.id}`, {
      token: client.token,
      rawBody: 'nome: Version two',
      headers: { 'content-type': 'application/x-yaml' },
    });
    expect(next.body.data).toMatchObject({ nome: 'Version two', version: 2 });
    const json = await api('PUT', '/tenants/templates/default', {
      token: client.token,
      rawBody: 'templateId: 1',
      headers: { 'content-type': 'application/yaml' },
    });
    expect(json.status).toBe(415);
  });

  test("the client's default template is applied to tenants created without templateId; null clears it", async () => {
    const client = await newClient();
    const templateId = await publish(client.token, retailBundle());
    expect((await api('PUT', '/tenants/templates/default', json(client.token, { templateId }))).body).toEqual({
      status: 'success',
      data: { templateId },
    });
    const withDefault = await newTenant(client.token);
    expect((await api('GET', '/tenant', { token: withDefault.token })).body.data.template).toMatchObject({
      id: templateId,
      version: 1,
    });

    await api('PUT', '/tenants/templates/default', json(client.token, { templateId: null }));
    const without = await newTenant(client.token);
    expect((await api('GET', '/tenant', { token: without.token })).body.data.template).toBeNull();
  });
});

describe('agents', () => {
  test('names are unique slots, tokens are shown once and work only on agent routes', async () => {
    const client = await newClient();
    const tenant = await newTenant(client.token);
    const created = await api('POST', '/tenant/agents', json(tenant.token, { nome: 'etl-2' }));
    expect(created.status).toBe(201);
    for (const nome of ['etl-2', 'default']) {
      expect(expectErrorEnvelope(await api('POST', '/tenant/agents', json(tenant.token, { nome })), 409).code).toBe(
        'agent_name_taken',
      );
    }
    expectErrorEnvelope(await api('POST', '/tenant/agents', json(tenant.token, { nome: 'Not A Slot' })), 400);
    const token = created.body.data.token;
    expectErrorEnvelope(await api('GET', '/tenant', { token }), 403);
    expectErrorEnvelope(await api('POST', '/agent/heartbeat', { token: tenant.token }), 403);
    expect((await api('POST', '/agent/heartbeat', { token })).body.data).toMatchObject({ agentId: 2, runs: [] });
    expect(
      (await api('GET', '/tenant/agents', { token: tenant.token })).body.data.map(
        (agent: { lastSeenAt: unknown }) => agent.lastSeenAt !== null,
      ),
    ).toEqual([false, true]);

    const rotated = await api('POST', '/tenant/agents/2/token', json(tenant.token, { previousValidForSeconds: 0 }));
    expect(rotated.body.data).toEqual({ id: 2, token: expect.any(String), previousExpiresAt: null });
    expectErrorEnvelope(await api('POST', '/agent/heartbeat', { token }), 401);
    expect((await api('POST', '/agent/heartbeat', { token: rotated.body.data.token })).status).toBe(200);
    expectErrorEnvelope(await api('POST', '/tenant/agents/99/token', { token: tenant.token }), 404);
    expectErrorEnvelope(await api('DELETE', '/tenant/agents/99/token/previous', { token: tenant.token }), 404);
  });

  test('a rotation keeps the previous agent token beating for its grace period; the list shows both; ending it is at once', async () => {
    const client = await newClient();
    const tenant = await newTenant(client.token);
    const old = (await api('POST', '/tenant/agents', json(tenant.token, { nome: 'etl-2' }))).body.data.token;
    await api('POST', '/agent/heartbeat', { token: old });
    const rotated = (await api('POST', '/tenant/agents/2/token', json(tenant.token, { previousValidForSeconds: 3600 }))).body
      .data;
    expect(rotated.previousExpiresAt).toEqual(expect.any(String));
    expect((await api('POST', '/agent/heartbeat', { token: old })).status).toBe(200);
    const listed = (await api('GET', '/tenant/agents', { token: tenant.token })).body.data[1];
    expect(listed).toMatchObject({
      id: 2,
      currentToken: { lastUsedAt: null },
      previousToken: { expiresAt: rotated.previousExpiresAt, lastUsedAt: expect.any(String) },
    });
    // A second rotation ends that previous token: the first rotation's is the previous one now.
    const again = (await api('POST', '/tenant/agents/2/token', { token: tenant.token })).body.data;
    expectErrorEnvelope(await api('POST', '/agent/heartbeat', { token: old }), 401);
    expect((await api('POST', '/agent/heartbeat', { token: rotated.token })).status).toBe(200);
    const ended = await api('DELETE', '/tenant/agents/2/token/previous', { token: tenant.token });
    expect(ended.body.data).toEqual({ id: 2, ended: true });
    expectErrorEnvelope(await api('POST', '/agent/heartbeat', { token: rotated.token }), 401);
    expect((await api('POST', '/agent/heartbeat', { token: again.token })).status).toBe(200);
    expect((await api('DELETE', '/tenant/agents/2/token/previous', { token: tenant.token })).body.data).toEqual({
      id: 2,
      ended: false,
    });
    // Another tenant's agent 2 is no agent of this one.
    const other = await newTenant(client.token);
    expectErrorEnvelope(await api('DELETE', '/tenant/agents/2/token/previous', { token: other.token }), 404);
  });

  test("an agent cannot report another agent's run", async () => {
    const client = await newClient();
    const templateId = await publish(client.token, retailBundle());
    const tenant = await newTenant(client.token, { templateId });
    const first = await agentToken(tenant.token);
    const second = (await api('POST', '/tenant/agents', json(tenant.token, { nome: 'other' }))).body.data.token;
    await api('POST', '/agent/heartbeat', { token: first });
    const plan = (await api('POST', '/tenant/templates/apply', json(tenant.token, { templateId }))).body.reloadPlan;
    await api('POST', '/tenant/templates/reload', json(tenant.token, { items: plan.slice(0, 1) }));
    const [run] = await eventually(async () => {
      const runs = (await api('POST', '/agent/heartbeat', { token: first })).body.data.runs;
      return runs.length > 0 ? runs : undefined;
    });
    expectErrorEnvelope(await api('POST', `/agent/runs/${run.id}`, json(second, { status: 'succeeded' })), 404);
    expectErrorEnvelope(await api('POST', `/agent/runs/${run.id}`, json(first, { status: 'dispatched' })), 400);
  });
});
