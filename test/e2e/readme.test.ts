import { describe, expect, inject, test } from 'vitest';
import { parse } from 'yaml';
import { freePort } from '#local/ports.ts';
import { answers, startTwinProcess } from '#test/support/processes.ts';
import { pasteReadmeSession, readmeSessionNames, readmeShellBlocks, runReadmeSessionPastes } from '#test/support/readme.ts';

/**
 * Each session is pasted twice in a row into one shell, as a reader may: the second paste shows the first
 * left nothing in its way (a busy port, a file, a name taken), and each is checked as the README says.
 */
const pastedTwice = (name: string, replacements: Record<string, string> = {}) =>
  runReadmeSessionPastes(name, { url: inject('twinUrl'), clientToken: inject('localClientToken') }, 2, replacements);

/** Each printed line, parsed as JSON. */
const jsonLines = (output: string) =>
  output
    .trim()
    .split('\n')
    .map((line) => JSON.parse(line));

test('no README shell block has an exit, which would close the terminal it is pasted into', () => {
  const blocks = readmeShellBlocks();
  expect(blocks.length).toBeGreaterThan(readmeSessionNames().length);
  for (const block of blocks) {
    // Comments may say "exit code"; the signal name EXIT (of a trap) is upper case.
    expect(block.replace(/(^|\s)#.*$/gm, ''), block).not.toMatch(/\bexit\b/);
  }
});

test('a README session that fails stops there, keeps the shell open and leaves nothing behind', async () => {
  expect(readmeSessionNames()).toEqual(['tenants', 'templates', 'sso', 'menu', 'datamarts', 'schedules', 'alerts', 'fleet']);
  // Nothing listens there, so each session's first request fails. pasteReadmeSession checks that the
  // shell is still open after the paste and that the scratch folder is empty.
  const unreachable = { url: `http://localhost:${await freePort()}`, clientToken: 'cli_nothing_listens_here' };
  for (const name of readmeSessionNames()) {
    const {
      pastes: [paste],
    } = await pasteReadmeSession(name, unreachable);
    expect(paste?.status, name).not.toBe(0);
  }
});

// The schedule session (the last test) waits on its twin's clock for one to two minutes: this group runs beside it
// (describe.concurrent), its own sessions one after another (test.sequential) on the shared test twin.
describe.concurrent('the README sessions on the test twin', () => {
  test.sequential('the README tenant session works as written, twice in a row', async () => {
    for (const output of await pastedTwice('tenants')) {
      const lines = jsonLines(output);
      expect(lines).toHaveLength(5);
      const [created, own, listed, deleted, afterDelete] = lines;
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
    }
  });

  test.sequential('the README template session works as written, twice in a row', async () => {
    const [first, second] = await pastedTwice('templates');
    for (const output of [first, second]) {
      const lines = jsonLines(output ?? '');
      expect(lines).toHaveLength(8);
      const [published, tenant, agent, firstBeat, applied, reloaded, secondBeat, runs] = lines;
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
    }
    // The second paste found the template the first one published or found, by its name.
    expect(jsonLines(second ?? '')[0].data.id).toBe(jsonLines(first ?? '')[0].data.id);
  });

  test.sequential('the README SSO session works as written, twice in a row', async () => {
    for (const output of await pastedTwice('sso')) {
      const [tenant, user, login, landing, session, jwks] = jsonLines(output);
      expect(user.data).toMatchObject({ login: 'ana@gamma.com' });
      expect(login).toMatchObject({ success: true, url: expect.stringContaining(`${tenant.data.dominio}`) });
      expect(landing).toEqual({ status: 302, location: expect.stringMatching(/\/apps\/sales\?showMenu=0$/) });
      expect(session.data).toMatchObject({
        user: { login: 'ana@gamma.com' },
        tenant: { id: tenant.data.id },
        ui: { showMenu: '0' },
      });
      expect(jwks.keys.length).toBeGreaterThan(0);
    }
  });

  test.sequential('the README custom menu example works as written, twice in a row', async () => {
    for (const output of await pastedTwice('menu')) {
      const menu = JSON.parse(output);
      expect(menu.user).toMatchObject({ nome: 'Bia', groups: [] });
      expect(menu.applications).toHaveLength(1);
      const link = new URL(menu.applications[0].href);
      expect(link.pathname).toMatch(/^\/auth\/api\/ey/);
      expect(link.searchParams.get('showMenu')).toBe('0');
      expect(Buffer.from(link.searchParams.get('ref') ?? '', 'base64').toString()).toBe('/apps/sales');
      expect(menu.desks).toEqual([{ nome: 'Sales', tables: ['Orders', 'Daily sales', 'Stock'] }]);
    }
  });

  test.sequential('the README datamart session works as written, twice in a row', async () => {
    for (const output of await pastedTwice('datamarts')) {
      const [datamarts, groupRecords, effective] = jsonLines(output);
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
        expect.objectContaining({
          allowed: true,
          hidden_columns: ['total'],
          expires_in: '2030-01-01T00:00:00Z',
          source: 'groups',
        }),
      ]);
    }
  });

  test.sequential('the README webhook session works as written, twice in a row, and stops its receiver', async () => {
    const port = String(await freePort());
    // The second paste starts its receiver on the same port: the first one's must be gone by then.
    const outputs = await pastedTwice('alerts', { '127.0.0.1:4000': `127.0.0.1:${port}`, 'PORT=4000': `PORT=${port}` });
    for (const output of outputs) {
      const lines = output.trim().split('\n');
      const [settings, alert, preview, queued, delivery] = jsonLines(lines.slice(0, 5).join('\n'));
      // The receiver stores the payload pretty-printed.
      const stored = JSON.parse(lines.slice(5).join('\n'));
      expect(settings.data.alertChannels.webhook).toMatchObject({
        enabled: true,
        signingSecret: expect.stringMatching(/^whsec_/),
      });
      expect(alert.data).toMatchObject({ nome: 'Daily sales', channels: { webhook: true } });
      expect(preview.data.payload).toMatchObject({ alert: { nome: 'Daily sales', id: alert.data.id }, user: { id: 7 } });
      expect(queued.data).toMatchObject({ status: 'queued', webhookId: expect.stringMatching(/^msg_/) });
      expect(delivery.data).toMatchObject({ status: 'delivered', attempts: [expect.objectContaining({ statusCode: 200 })] });
      expect(stored).toMatchObject({ alert: { id: alert.data.id }, user: { id: 7, email: 'ana@echo.com' } });
      expect(stored.content).toEqual([{ type: 'text', nome: 'Intro', generated: { text: 'Sales are up 12%' } }]);
    }
    expect(await answers(`http://127.0.0.1:${port}/`), 'the receiver still listens').toBe(false);
  });

  test.sequential('the README fleet session rolls version 2 out in waves, twice in a row, and the events arrive', async () => {
    const port = String(await freePort());
    const outputs = await pastedTwice('fleet', { '127.0.0.1:4001': `127.0.0.1:${port}`, 'PORT=4001': `PORT=${port}` });
    for (const [paste, output] of outputs.entries()) {
      const lines = output.trim().split('\n');
      const [below, dry, started, finished] = jsonLines(lines.slice(0, 4).join('\n'));
      const events = lines.slice(4);
      // The first paste's three tenants are on version 1. The second paste's new ones get version 2 at their creation
      // (the template's latest), so nothing is below it, and the rollout finds every tenant unchanged.
      const first = paste === 0;
      expect(below.data.map((tenant: { templateVersion: number }) => tenant.templateVersion)).toEqual(first ? [1, 1, 1] : []);
      const total = 3 * (paste + 1);
      expect(dry.data).toMatchObject({ dryRun: true, version: 2, total, truncated: false });
      expect(dry.data.tenants[0]).toMatchObject(
        first
          ? { fromVersion: 1, outcome: 'applied', tables: { created: ['daily'], rebuilt: ['orders'], unchanged: [] } }
          : { fromVersion: 2, outcome: 'unchanged', tables: { created: [], rebuilt: [], unchanged: ['orders', 'daily'] } },
      );
      expect(started.data).toMatchObject({ state: 'running', version: 2, total, waveSize: 2 });
      expect(finished.data).toMatchObject({
        id: started.data.id,
        state: 'finished',
        counts: { pending: 0, applied: first ? 3 : 0, unchanged: first ? 0 : total, pending_activation: 0, failed: 0 },
      });
      expect(finished.data.waves).toHaveLength(Math.ceil(total / 2));
      // One line per wave and one for the end, each event received once.
      expect(events.filter((line) => line.includes('rollout.wave_finished'))).toHaveLength(Math.ceil(total / 2));
      expect(events.filter((line) => line.includes('rollout.finished'))).toHaveLength(1);
    }
    expect(await answers(`http://127.0.0.1:${port}/`), 'the receiver still listens').toBe(false);
  });
});

/** One request to `twin`, as `token`, that must succeed: the data of its answer. */
async function call<T>(twin: { url: string }, method: string, path: string, token: string): Promise<T> {
  const response = await fetch(`${twin.url}${path}`, { method, headers: { authorization: `Bearer ${token}` } });
  expect(response.status, `${method} ${path}`).toBe(200);
  return ((await response.json()) as { data: T }).data;
}

// The shared test twin runs without its clock (test/support/global-setup.ts): this one has it, as `npm start`.
// Each paste waits for a minute boundary, so this test takes one to two minutes.
test.concurrent(
  'the README schedule session works as written, twice in a row, and deletes its schedule',
  async () => {
    const twin = await startTwinProcess(['--in-memory'], { LOCAL_CLIENT_TOKEN: `cli_readme_${crypto.randomUUID()}` });
    try {
      for (const output of await runReadmeSessionPastes('schedules', twin, 2)) {
        const lines = output.trim().split('\n');
        const [patched, put, next, runs] = jsonLines(lines.slice(0, 4).join('\n'));
        expect(patched.data).toMatchObject({ nome: 'Delta', schedulingGranularity: 'minutes' });
        expect(put.data.body).toMatchObject({ nome: 'Every minute', version: 1 });
        // The clock fires on the minute, and the schedule's flows are enqueued.
        const fires = next.data.fires as Array<{ utc: string }>;
        expect(fires.map((fire) => Date.parse(fire.utc) % 60_000)).toEqual([0, 0, 0]);
        expect(Date.parse(fires[1]?.utc ?? '') - Date.parse(fires[0]?.utc ?? '')).toBe(60_000);
        expect(runs.data).toEqual([expect.objectContaining({ status: 'fired', scheduleVersion: 1 })]);
        expect(runs.data[0].flows).toEqual([
          { flowId: 1, context: 'full', tokenId: 1, status: 'enqueued' },
          { flowId: 2, context: 'incremental', tokenId: 1, status: 'enqueued' },
        ]);
        expect(Date.parse(runs.data[0].slot) % 60_000).toBe(0);
        expect(parse(lines.slice(4).join('\n')).body).toMatchObject({
          nome: 'Every minute',
          version: 1,
          timezone: 'Europe/Berlin',
        });
        // Seen as the tenant (a new token from its client): it has no schedule left to fire.
        const rotated = await call<{ token: string }>(twin, 'POST', `/tenants/${patched.data.id}/token`, twin.clientToken);
        expect(await call(twin, 'GET', '/tenant/schedules', rotated.token)).toEqual([]);
      }
    } finally {
      twin.child.kill('SIGTERM');
      await twin.exited;
    }
  },
  300_000,
);
