/**
 * Races over real HTTP, for every uniqueness rule and every id counter (docs/architecture.md lists
 * them with the item or condition that enforces each): 30 to 60 requests at once, exactly one
 * winner where one thing may exist, distinct ids where many may, nothing duplicated, and what the
 * losers were told matches what was stored.
 */
import { describe, expect, test } from 'vitest';
import { api, type ApiAnswer, newClient, newTenant } from '#test/support/api.ts';
import { publish, retailBundle } from '#test/support/templates.ts';

const json = (token: string, body?: unknown) => ({ token, body });
const statuses = (answers: ApiAnswer[]) =>
  answers.reduce<Record<number, number>>(
    (counts, answer) => ({ ...counts, [answer.status]: (counts[answer.status] ?? 0) + 1 }),
    {},
  );
const at = <T>(count: number, make: (index: number) => Promise<T>) =>
  Promise.all(Array.from({ length: count }, (_, index) => make(index)));

describe('uniqueness rules: one winner', () => {
  test('a login, in any case, claimed by 30 creations at once: one user', async () => {
    const client = await newClient();
    const tenant = await newTenant(client.token);
    const answers = await at(30, (index) =>
      api('POST', '/tenant/users', json(tenant.token, { login: index % 2 ? 'Ana@X.io' : 'ana@x.io', nome: `Ana ${index}` })),
    );
    expect(statuses(answers)).toEqual({ 201: 1, 409: 29 });
    expect(answers.filter((answer) => answer.status === 409).every((answer) => answer.body.code === 'login_taken')).toBe(true);
    const users = (await api('GET', '/tenant/users', { token: tenant.token })).body.data;
    expect(users).toHaveLength(1);
  });

  test('one new login taken by 30 renames at once: one user has it', async () => {
    const client = await newClient();
    const tenant = await newTenant(client.token);
    const ids = await at(30, async (index) => {
      const created = await api('POST', '/tenant/users', json(tenant.token, { login: `u${index}@x.io`, nome: 'U' }));
      return created.body.data.id as number;
    });
    const answers = await at(30, (index) =>
      api('PATCH', `/tenant/users/${ids[index]}`, json(tenant.token, { login: 'boss@x.io' })),
    );
    expect(statuses(answers)).toEqual({ 200: 1, 409: 29 });
    const users = (await api('GET', '/tenant/users', { token: tenant.token })).body.data;
    expect(users.filter((user: { login: string }) => user.login === 'boss@x.io')).toHaveLength(1);
  });

  test('an agent name claimed by 30 creations at once: one agent, and the limit not spent by the losers', async () => {
    const client = await newClient();
    const tenant = await newTenant(client.token);
    const answers = await at(30, () => api('POST', '/tenant/agents', json(tenant.token, { nome: 'warehouse' })));
    expect(statuses(answers)).toEqual({ 201: 1, 409: 29 });
    expect(answers.filter((answer) => answer.status === 409).every((answer) => answer.body.code === 'agent_name_taken')).toBe(
      true,
    );
    const agents = (await api('GET', '/tenant/agents', { token: tenant.token })).body.data;
    expect(agents.map((agent: { nome: string }) => agent.nome).sort()).toEqual(['default', 'warehouse']);
    // 48 more fit (50 with the default agent), whatever the 29 losers allocated.
    const more = await at(48, (index) => api('POST', '/tenant/agents', json(tenant.token, { nome: `slot-${index}` })));
    expect(statuses(more)).toEqual({ 201: 48 });
  });

  test('60 agents at once where 49 fit: exactly 49, the rest 409 agent_limit', async () => {
    const client = await newClient();
    const tenant = await newTenant(client.token);
    const answers = await at(60, (index) => api('POST', '/tenant/agents', json(tenant.token, { nome: `agent-${index}` })));
    expect(statuses(answers)).toEqual({ 201: 49, 409: 11 });
    expect(answers.filter((answer) => answer.status === 409).every((answer) => answer.body.code === 'agent_limit')).toBe(true);
    expect((await api('GET', '/tenant/agents', { token: tenant.token })).body.data).toHaveLength(50);
  });

  test('a template name published 30 times at once (in any case): one template, the others 409 naming it', async () => {
    const client = await newClient();
    const answers = await at(30, (index) =>
      api('POST', '/tenants/templates', json(client.token, { nome: index % 2 ? 'SALES' : 'Sales' })),
    );
    expect(statuses(answers)).toEqual({ 201: 1, 409: 29 });
    const winner = answers.find((answer) => answer.status === 201)?.body.data.id;
    expect(
      answers.filter((answer) => answer.status === 409).every((answer) => answer.body.message.includes(`id ${winner}`)),
    ).toBe(true);
    expect((await api('GET', '/tenants/templates', { token: client.token })).body.data).toEqual([
      { id: winner, nome: expect.any(String) },
    ]);
  });

  test('30 changes of one tenant at once with the same If-Match: one applies, the others 412 version_mismatch', async () => {
    const client = await newClient();
    const tenant = await newTenant(client.token);
    const etag = (await api('GET', `/tenants/${tenant.id}`, { token: client.token })).headers.get('etag') as string;
    const answers = await at(30, (index) =>
      api('PATCH', `/tenants/${tenant.id}`, {
        token: client.token,
        headers: { 'if-match': etag },
        body: { nome: `Acme ${index}`, development_variables: { RUN: String(index) } },
      }),
    );
    expect(statuses(answers)).toEqual({ 200: 1, 412: 29 });
    expect(answers.filter((answer) => answer.status === 412).every((answer) => answer.body.code === 'version_mismatch')).toBe(
      true,
    );
    // What was stored is the winner's change, whole: its name with its own variables.
    const winner = answers.find((answer) => answer.status === 200)?.body.data;
    const stored = (await api('GET', `/tenants/${tenant.id}`, { token: client.token })).body.data;
    expect(stored).toMatchObject({ nome: winner.nome, development_variables: winner.development_variables });
    expect(stored.nome).toBe(`Acme ${stored.development_variables.RUN}`);
  });

  test('a template deleted while 30 requests make it the default: never a default that is gone', async () => {
    const client = await newClient();
    const templateId = await publish(client.token, retailBundle());
    const [deleted, ...defaults] = await Promise.all([
      api('DELETE', `/tenants/templates/${templateId}`, { token: client.token }),
      ...Array.from({ length: 30 }, () => api('PUT', '/tenants/templates/default', json(client.token, { templateId }))),
    ]);
    const stillThere = (await api('GET', `/tenants/templates/${templateId}`, { token: client.token })).status;
    // A tenant created without a templateId gets the client's default: it shows what the default is now.
    const created = await api('POST', '/tenants', json(client.token, { nome: 'After the race', ativo: true }));
    expect(created.status).toBe(201);
    const detail = (await api('GET', `/tenants/${created.body.data.id}`, { token: client.token })).body.data;
    if (deleted?.status === 200) {
      // The delete won: every set-default after it was refused, and the default is not the deleted template.
      expect(stillThere).toBe(404);
      expect(detail.template).toBeNull();
    } else {
      // A set-default won first: the delete was refused and the template is still there, the default.
      expect(deleted?.body.code).toBe('template_is_default');
      expect(stillThere).toBe(200);
      expect(detail.template).toMatchObject({ id: templateId });
    }
    expect(defaults.every((answer) => answer.status === 200 || answer.status === 404)).toBe(true);
  });

  test('one Idempotency-Key, 50 creations at once: one tenant, one answer', async () => {
    const client = await newClient();
    const headers = { 'idempotency-key': crypto.randomUUID() };
    const answers = await at(50, () =>
      api('POST', '/tenants', { token: client.token, headers, body: { nome: 'Once', ativo: true } }),
    );
    const created = answers.filter((answer) => answer.status === 201);
    expect(new Set(created.map((answer) => answer.body.data.token)).size).toBe(1);
    // A duplicate still in flight after 5 s is told to come back (409 with Retry-After), never given another tenant.
    expect(answers.every((answer) => answer.status === 201 || answer.body.code === 'idempotency_key_in_progress')).toBe(true);
    expect((await api('GET', '/tenants', { token: client.token })).body.data).toHaveLength(1);
  });

  test('30 versions of one template published at once: each version number once, none skipped', async () => {
    const client = await newClient();
    const templateId = await publish(client.token, retailBundle());
    const answers = await at(30, (index) =>
      api('PUT', `/tenants/templates/${templateId}`, json(client.token, { ...retailBundle(), nome: `Retail ${index}` })),
    );
    const versions = answers.filter((answer) => answer.status === 200).map((answer) => answer.body.data.version as number);
    expect(answers.every((answer) => answer.status === 200 || answer.status === 409)).toBe(true);
    expect(new Set(versions).size).toBe(versions.length);
    const history = (await api('GET', `/tenants/templates/${templateId}`, { token: client.token })).body.data.versions;
    expect(history.map((entry: { version: number }) => entry.version)).toEqual(
      Array.from({ length: versions.length + 1 }, (_, index) => index + 1),
    );
  });

  test('30 rollouts of one template at once: one starts, the others 409 rollout_in_progress; once it ends, the next may start', async () => {
    const client = await newClient();
    const templateId = await publish(client.token, retailBundle());
    await newTenant(client.token, { templateId });
    await newTenant(client.token, { templateId });
    const rollouts = `/tenants/templates/${templateId}/rollouts`;
    // Two waves an hour apart: the one that starts is still running when the last of the 30 arrives, however
    // fast the twin works through them (a rollout that had ended by then would rightly let another start).
    const body = { tenants: 'all', waveSize: 1, pauseSeconds: 3600 };
    const answers = await at(30, () => api('POST', rollouts, json(client.token, body)));
    expect(statuses(answers)).toEqual({ 202: 1, 409: 29 });
    expect(answers.filter((answer) => answer.status === 409).every((answer) => answer.body.code === 'rollout_in_progress')).toBe(
      true,
    );
    const started = answers.find((answer) => answer.status === 202)?.body.data.id;
    const listed = (await api('GET', rollouts, { token: client.token })).body.data;
    expect(listed.map((rollout: { id: number }) => rollout.id)).toEqual([started]);
    // Once it ended (cancelled here), the template takes another.
    expect((await api('POST', `${rollouts}/${started}/cancel`, { token: client.token })).status).toBe(200);
    expect((await api('POST', rollouts, json(client.token, body))).status).toBe(202);
  });

  test('30 writes of one new schedule at once: one creates it (201), the others replace it, every version once', async () => {
    const client = await newClient();
    const templateId = await publish(client.token, retailBundle());
    const tenant = await newTenant(client.token, { templateId });
    const flow = (await api('GET', '/tenant', { token: tenant.token })).body.data.flows[0].id;
    const file = (nome: string) => ({
      header: { id: 3 },
      body: { nome, ativo: false, timezone: 'UTC', flows: [{ flow_etl_id: flow, context: 'full' }], triggers: [] },
    });
    const answers = await at(30, (index) => api('PUT', '/tenant/schedules/3', json(tenant.token, file(`S${index}`))));
    const counts = statuses(answers);
    expect(counts[201]).toBe(1);
    const written = (counts[201] ?? 0) + (counts[200] ?? 0);
    expect(written + (counts[409] ?? 0)).toBe(30);
    const stored = await api('GET', '/tenant/schedules/3', { token: tenant.token });
    expect(stored.body.data.body.version).toBe(written);
  });
});

describe('id counters: distinct ids, never one twice', () => {
  test.each([
    ['tenants', async (client: string, _index: number) => api('POST', '/tenants', json(client, { nome: 'Same', ativo: true }))],
    [
      'templates',
      async (client: string, index: number) => api('POST', '/tenants/templates', json(client, { nome: `T${index}` })),
    ],
  ])('40 %s at once', async (_name, create) => {
    const client = await newClient();
    const answers = await at(40, (index) => create(client.token, index));
    expect(statuses(answers)).toEqual({ 201: 40 });
    expect(new Set(answers.map((answer) => answer.body.data.id)).size).toBe(40);
    if (answers[0]?.body.data.dominio) expect(new Set(answers.map((answer) => answer.body.data.dominio)).size).toBe(40);
  });

  test.each([
    ['users', (index: number) => ['/tenant/users', { login: `u${index}@x.io`, nome: 'U' }] as const],
    ['groups', () => ['/tenant/groups', { nome: 'Same' }] as const],
    ['alerts', () => ['/tenant/alerts', { nome: 'Same', channels: { webhook: false }, content: [] }] as const],
    ['datamarts', () => ['/tenant/datamart', { nome: 'Same', tables: [], owners: [] }] as const],
  ])('40 %s of one tenant at once', async (_name, request) => {
    const client = await newClient();
    const tenant = await newTenant(client.token);
    const answers = await at(40, (index) => {
      const [path, body] = request(index);
      return api('POST', path, json(tenant.token, body));
    });
    expect(statuses(answers)).toEqual({ 201: 40 });
    expect(new Set(answers.map((answer) => answer.body.data.id)).size).toBe(40);
  });
});
