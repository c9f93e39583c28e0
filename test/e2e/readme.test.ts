import { expect, inject, test } from 'vitest';
import { freePort } from '#local/ports.ts';
import { runReadmeSession as runSession } from '#test/support/readme.ts';

const runReadmeSession = (name: string, replacements: Record<string, string> = {}) =>
  runSession(name, { url: inject('twinUrl'), clientToken: inject('localClientToken') }, replacements);

/** Each printed line, parsed as JSON. */
const jsonLines = (output: string) =>
  output
    .trim()
    .split('\n')
    .map((line) => JSON.parse(line));

test('the README tenant session works as written', async () => {
  const answers = jsonLines(await runReadmeSession('tenants'));
  expect(answers).toHaveLength(5);
  const [created, own, listed, deleted, afterDelete] = answers;
  expect(created.data).toMatchObject({ nome: 'Acme', ativo: true });
  expect(own.data).toMatchObject({ id: created.data.id, applications: [], desks: [] });
  expect(listed.data).toContainEqual({
    id: created.data.id,
    nome: 'Acme',
    dominio: created.data.dominio,
    ativo: true,
    pendingTemplateId: null,
  });
  expect(deleted).toEqual({ status: 'success', data: true });
  expect(afterDelete).toMatchObject({ status: 'error', code: 'tenant_not_found', message: 'Tenant not found' });
});

test('the README template session works as written', async () => {
  const answers = jsonLines(await runReadmeSession('templates'));
  expect(answers).toHaveLength(8);
  const [published, tenant, agent, firstBeat, applied, reloaded, secondBeat, runs] = answers;
  expect(published.data).toMatchObject({ nome: 'Retail analytics', version: 1 });
  expect(tenant.data).toMatchObject({ nome: 'Beta', ativo: true });
  expect(agent.data).toMatchObject({ id: 1, token: expect.stringMatching(/^agt_/) });
  expect(firstBeat.data.runs).toEqual([]);
  expect(applied.reloadPlan).toHaveLength(3);
  expect(reloaded.results.map((result: { status: string }) => result.status)).toEqual(['enqueued', 'enqueued', 'enqueued']);
  expect(secondBeat.data.runs.map((run: { flowId: number }) => run.flowId)).toEqual(
    applied.reloadPlan.map((item: { flowId: number }) => item.flowId),
  );
  expect(runs.data).toHaveLength(3);
});

test('the README SSO session works as written', async () => {
  const [tenant, user, login, landing, session, jwks] = jsonLines(await runReadmeSession('sso'));
  expect(user.data).toMatchObject({ login: 'ana@gamma.com' });
  expect(login).toMatchObject({ success: true, url: expect.stringContaining(`${tenant.data.dominio}`) });
  expect(landing).toEqual({ status: 302, location: expect.stringMatching(/\/apps\/sales\?showMenu=0$/) });
  expect(session.data).toMatchObject({ user: { login: 'ana@gamma.com' }, tenant: { id: tenant.data.id }, ui: { showMenu: '0' } });
  expect(jwks.keys.length).toBeGreaterThan(0);
});

test('the README custom menu example works as written', async () => {
  const menu = JSON.parse(await runReadmeSession('menu'));
  expect(menu.user).toMatchObject({ nome: 'Bia', groups: [] });
  expect(menu.applications).toHaveLength(1);
  const link = new URL(menu.applications[0].href);
  expect(link.pathname).toMatch(/^\/auth\/api\/ey/);
  expect(link.searchParams.get('showMenu')).toBe('0');
  expect(Buffer.from(link.searchParams.get('ref') ?? '', 'base64').toString()).toBe('/apps/sales');
  expect(menu.desks).toEqual([{ nome: 'Sales', tables: ['Orders', 'Daily sales', 'Stock'] }]);
});

test('the README datamart session works as written', async () => {
  const [datamarts, groupRecords, effective] = jsonLines(await runReadmeSession('datamarts'));
  expect(datamarts.data).toEqual([
    expect.objectContaining({
      nome: 'Vendas',
      owners: [expect.objectContaining({ user: expect.objectContaining({ login: 'ana@epsilon.com' }) })],
    }),
  ]);
  expect(groupRecords.data).toEqual([
    expect.objectContaining({ group: expect.objectContaining({ nome: 'Sales' }), hidden_columns: ['total'] }),
  ]);
  expect(effective.data).toEqual([
    expect.objectContaining({ allowed: true, hidden_columns: ['total'], expires_in: '2030-01-01T00:00:00Z', source: 'groups' }),
  ]);
});

test('the README webhook session works as written: configure, run the receiver, force-send, read the log', async () => {
  const port = String(await freePort());
  const output = await runReadmeSession('alerts', { '127.0.0.1:4000': `127.0.0.1:${port}`, 'PORT=4000': `PORT=${port}` });
  const lines = output.trim().split('\n');
  const [settings, alert, preview, queued, delivery] = jsonLines(lines.slice(0, 5).join('\n'));
  // The receiver stores the payload pretty-printed.
  const stored = JSON.parse(lines.slice(5).join('\n'));
  expect(settings.data.alertChannels.webhook).toMatchObject({ enabled: true, signingSecret: expect.stringMatching(/^whsec_/) });
  expect(alert.data).toMatchObject({ nome: 'Daily sales', channels: { webhook: true } });
  expect(preview.data.payload).toMatchObject({ alert: { nome: 'Daily sales', id: alert.data.id }, user: { id: 7 } });
  expect(queued.data).toMatchObject({ status: 'queued', webhookId: expect.stringMatching(/^msg_/) });
  expect(delivery.data).toMatchObject({ status: 'delivered', attempts: [expect.objectContaining({ statusCode: 200 })] });
  expect(stored).toMatchObject({ alert: { id: alert.data.id }, user: { id: 7, email: 'ana@echo.com' } });
  expect(stored.content).toEqual([{ type: 'text', nome: 'Intro', generated: { text: 'Sales are up 12%' } }]);
});
