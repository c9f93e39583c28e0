/**
 * Fleet rollouts through the twin: the template's fleet, a dry run that writes nothing, a rollout in
 * waves on the rollout queue (each tenant applied once, an inactive one left for its activation, the
 * reload plans queued), the failure budget, pause, resume and cancel, and one rollout per template.
 */
import { describe, expect, test } from 'vitest';
import { api, expectErrorEnvelope, newClient, newTenant } from '#test/support/api.ts';
import { agentToken, bundleOf, eventually, publish } from '#test/support/templates.ts';

const flows = [
  { key: 'load', writes: ['orders'] },
  { key: 'daily', reads: ['orders'], writes: ['daily'] },
];

/** Version 2 rebuilds `daily` (a new column) and creates `stock`. */
function secondVersion() {
  const bundle = bundleOf('Retail', [...flows, { key: 'stock', writes: ['stock'] }]);
  const daily = bundle.tables?.find((table) => table.key === 'daily');
  daily?.columns.push({ column_name: 'total', data_type: 'numeric', label: 'Total' });
  return bundle;
}

async function fleetOf(token: string, templateId: number, query = '') {
  const answer = await api('GET', `/tenants/templates/${templateId}/tenants${query}`, { token });
  expect(answer.status).toBe(200);
  return answer.body.data as Array<{
    tenantId: number;
    nome: string;
    ativo: boolean;
    templateVersion: number | null;
    applyPending: boolean;
  }>;
}

async function rolloutOf(token: string, templateId: number, rolloutId: number) {
  const answer = await api('GET', `/tenants/templates/${templateId}/rollouts/${rolloutId}`, { token });
  expect(answer.status).toBe(200);
  return answer.body.data;
}

const untilState = (token: string, templateId: number, rolloutId: number, state: string, timeoutMs = 30_000) =>
  eventually(async () => {
    const rollout = await rolloutOf(token, templateId, rolloutId);
    return rollout.state === state ? rollout : undefined;
  }, timeoutMs);

/** A client with a published template and `count` tenants created with it (the last `inactive` of them inactive). */
async function fleet(count: number, inactive = 0) {
  const client = await newClient();
  const templateId = await publish(client.token, bundleOf('Retail', flows));
  const tenants = [];
  for (let index = 0; index < count; index++) {
    tenants.push(await newTenant(client.token, { nome: `Shop ${index}`, templateId, ativo: index < count - inactive }));
  }
  return { client, templateId, tenants };
}

describe('a template version rolled out to the fleet', () => {
  test('the fleet, a dry run that writes nothing, then waves that apply each tenant once and queue its reloads', async () => {
    const { client, templateId, tenants } = await fleet(4, 1);
    const [first, , , sleeping] = tenants;
    if (!first || !sleeping) throw new Error('four tenants');
    const before = await fleetOf(client.token, templateId);
    expect(before).toHaveLength(4);
    expect(before.find((member) => member.tenantId === sleeping.id)).toEqual({
      tenantId: sleeping.id,
      nome: 'Shop 3',
      ativo: false,
      templateVersion: null,
      applyPending: true,
    });
    expect(before.filter((member) => member.templateVersion === 1)).toHaveLength(3);

    const published = await api('PUT', `/tenants/templates/${templateId}`, { token: client.token, body: secondVersion() });
    expect(published.status).toBe(200);
    expect(await fleetOf(client.token, templateId, '?belowVersion=2')).toHaveLength(4);

    const dry = await api('POST', `/tenants/templates/${templateId}/rollouts`, {
      token: client.token,
      body: { tenants: 'all', dryRun: true, waveSize: 2 },
    });
    expect(dry.status).toBe(200);
    expect(dry.body.data).toMatchObject({
      dryRun: true,
      templateId,
      version: 2,
      total: 4,
      waveSize: 2,
      waves: 2,
      truncated: false,
    });
    const described = dry.body.data.tenants.find((tenant: { tenantId: number }) => tenant.tenantId === first.id);
    expect(described).toMatchObject({ fromVersion: 1, toVersion: 2, outcome: 'applied', error: null });
    expect(described.tables).toEqual({ created: ['stock'], rebuilt: ['daily'], unchanged: ['orders'] });
    // The tables the apply on creation left pending (it handed its plan to no one) are in it too.
    expect(described.reloadPlan.map((item: { flowKey: string }) => item.flowKey)).toEqual(['load', 'daily', 'stock']);
    expect(described.reloadPlan.find((item: { flowKey: string }) => item.flowKey === 'stock').flowId).toBeNull();
    expect(dry.body.data.tenants.find((tenant: { tenantId: number }) => tenant.tenantId === sleeping.id).outcome).toBe(
      'pending_activation',
    );
    // Nothing written: the fleet is where it was, and there is no rollout.
    expect(await fleetOf(client.token, templateId)).toEqual(before);
    expect((await api('GET', `/tenants/templates/${templateId}/rollouts`, { token: client.token })).body.data).toEqual([]);

    // The first tenant's agent is online (an offline agent's loads are skipped, as a reload skips them).
    const agent = await agentToken(first.token);
    expect((await api('POST', '/agent/heartbeat', { token: agent })).status).toBe(200);
    const started = await api('POST', `/tenants/templates/${templateId}/rollouts`, {
      token: client.token,
      body: { tenants: 'all', waveSize: 2, reload: true },
    });
    expect(started.status).toBe(202);
    expect(started.body.data).toMatchObject({ templateId, version: 2, state: 'running', total: 4, waveSize: 2 });
    const rolloutId = started.body.data.id;

    const finished = await untilState(client.token, templateId, rolloutId, 'finished');
    expect(finished.counts).toEqual({ pending: 0, applied: 3, unchanged: 0, pending_activation: 1, failed: 0 });
    expect(finished.waves.map((wave: { state: string; tenants: number }) => [wave.state, wave.tenants])).toEqual([
      ['finished', 2],
      ['finished', 2],
    ]);
    expect(finished.currentWave).toBeNull();

    const applied = await api('GET', `/tenants/templates/${templateId}/rollouts/${rolloutId}/tenants?outcome=applied`, {
      token: client.token,
    });
    expect(applied.body.data.map((tenant: { tenantId: number }) => tenant.tenantId)).toEqual(
      tenants.slice(0, 3).map((t) => t.id),
    );
    expect(applied.body.data[0]).toMatchObject({ fromVersion: 1, error: null, reloadError: null });
    expect(applied.body.data[0].reloadPlan).toHaveLength(3);

    // Each applied tenant runs version 2; its reload plan went to its agent.
    const after = await fleetOf(client.token, templateId);
    expect(
      after
        .filter((member) => member.templateVersion === 2)
        .map((member) => member.tenantId)
        .sort(),
    ).toEqual(
      tenants
        .slice(0, 3)
        .map((t) => t.id)
        .sort(),
    );
    const beat = await eventually(async () => {
      const data = (await api('POST', '/agent/heartbeat', { token: agent })).body.data;
      return data.runs.length >= 3 ? data : undefined;
    });
    expect(beat.runs).toHaveLength(3);
    // Applied once: a second apply of the same version has nothing to plan.
    const again = await api('POST', '/tenant/templates/apply', { token: first.token, body: { templateId } });
    expect(again.body).toEqual({ success: true, reloadPlan: [] });

    // The inactive tenant waits for its activation, which applies version 2.
    expect(after.find((member) => member.tenantId === sleeping.id)).toMatchObject({ templateVersion: null, applyPending: true });
    expect((await api('POST', `/tenants/${sleeping.id}/activate`, { token: client.token })).status).toBe(200);
    expect((await fleetOf(client.token, templateId)).find((member) => member.tenantId === sleeping.id)).toMatchObject({
      templateVersion: 2,
      applyPending: false,
    });
    expect(await fleetOf(client.token, templateId, '?belowVersion=2')).toEqual([]);
  });

  test('pause, resume, cancel; one rollout per template; a failure budget pauses it', async () => {
    const { client, templateId, tenants } = await fleet(3);
    const [, second, third] = tenants;
    if (!second || !third) throw new Error('three tenants');
    await api('PUT', `/tenants/templates/${templateId}`, { token: client.token, body: secondVersion() });
    const start = (body: object) => api('POST', `/tenants/templates/${templateId}/rollouts`, { token: client.token, body });
    const act = (rolloutId: number, verb: string) =>
      api('POST', `/tenants/templates/${templateId}/rollouts/${rolloutId}/${verb}`, { token: client.token });

    // An hour between waves: after the first, it waits.
    const slow = (await start({ tenants: 'all', waveSize: 1, pauseSeconds: 3600 })).body.data;
    const waiting = await eventually(async () => {
      const rollout = await rolloutOf(client.token, templateId, slow.id);
      return rollout.waves[0].state === 'finished' ? rollout : undefined;
    });
    expect(waiting).toMatchObject({ state: 'running', currentWave: 2, counts: { applied: 1, pending: 2 } });
    expect(waiting.nextWaveAt).not.toBeNull();

    const second_ = await start({ tenants: [third.id] });
    expect(expectErrorEnvelope(second_, 409).code).toBe('rollout_in_progress');
    expect(second_.body.message).toContain(`Rollout ${slow.id}`);
    // Nor is the template deleted under it.
    const etag = (await api('GET', `/tenants/templates/${templateId}`, { token: client.token })).headers.get('etag') ?? '';
    const deletion = await api('DELETE', `/tenants/templates/${templateId}`, {
      token: client.token,
      headers: { 'if-match': etag },
    });
    expect(expectErrorEnvelope(deletion, 409).code).toBe('rollout_in_progress');

    expect((await act(slow.id, 'pause')).body.data).toMatchObject({ state: 'paused', pauseReason: 'asked' });
    expect(expectErrorEnvelope(await act(slow.id, 'pause'), 409).code).toBe('rollout_state');
    expect((await act(slow.id, 'resume')).body.data).toMatchObject({ state: 'running', pauseReason: null });
    const cancelled = (await act(slow.id, 'cancel')).body.data;
    expect(cancelled).toMatchObject({ state: 'cancelled', currentWave: null, counts: { applied: 1, pending: 2 } });
    expect(expectErrorEnvelope(await act(slow.id, 'resume'), 409).code).toBe('rollout_state');

    // The template is free again. A tenant deleted after the rollout planned it fails, and the budget of 1 pauses it.
    const budgeted = (await start({ tenants: [second.id, third.id], waveSize: 1, pauseSeconds: 2, failureBudget: 1 })).body.data;
    await eventually(async () =>
      (await rolloutOf(client.token, templateId, budgeted.id)).counts.applied === 1 ? true : undefined,
    );
    expect((await api('DELETE', '/tenants', { token: client.token, body: { id: third.id } })).status).toBe(200);
    const paused = await untilState(client.token, templateId, budgeted.id, 'paused');
    expect(paused).toMatchObject({ pauseReason: 'failure_budget', counts: { applied: 1, failed: 1, pending: 0 } });
    const failed = await api('GET', `/tenants/templates/${templateId}/rollouts/${budgeted.id}/tenants?outcome=failed`, {
      token: client.token,
    });
    expect(failed.body.data).toEqual([
      expect.objectContaining({
        tenantId: third.id,
        wave: 2,
        outcome: 'failed',
        error: { code: 'tenant_not_found', message: 'Tenant not found' },
      }),
    ]);
    expect((await act(budgeted.id, 'resume')).status).toBe(200);
    const done = await untilState(client.token, templateId, budgeted.id, 'finished');
    expect(done.counts).toMatchObject({ applied: 1, failed: 1 });

    const listed = (await api('GET', `/tenants/templates/${templateId}/rollouts`, { token: client.token })).body.data;
    expect(listed.map((rollout: { id: number; state: string }) => [rollout.id, rollout.state])).toEqual([
      [budgeted.id, 'finished'],
      [slow.id, 'cancelled'],
    ]);
  });

  test("another client's template and rollouts are 404; tenants outside the fleet and too many waves are 400", async () => {
    const { client, templateId, tenants } = await fleet(2);
    const stranger = await newClient();
    const outsider = await newTenant(stranger.token);
    expect(
      expectErrorEnvelope(await api('GET', `/tenants/templates/${templateId}/tenants`, { token: stranger.token }), 404).code,
    ).toBe('template_not_found');
    const refused = await api('POST', `/tenants/templates/${templateId}/rollouts`, {
      token: client.token,
      body: { tenants: [tenants[0]?.id, outsider.id] },
    });
    expect(expectErrorEnvelope(refused, 400).errors).toEqual([
      expect.objectContaining({ pointer: '/tenants/1', message: `tenant ${outsider.id} does not have the template` }),
    ]);
    const version = await api('POST', `/tenants/templates/${templateId}/rollouts`, {
      token: client.token,
      body: { tenants: 'all', version: 9 },
    });
    expect(expectErrorEnvelope(version, 404).code).toBe('template_version_not_found');
    const started = (
      await api('POST', `/tenants/templates/${templateId}/rollouts`, { token: client.token, body: { tenants: 'all' } })
    ).body.data;
    const theirs = await api('GET', `/tenants/templates/${templateId}/rollouts/${started.id}`, { token: stranger.token });
    expect(expectErrorEnvelope(theirs, 404).code).toBe('template_not_found');
    // Its tenants' page is read beside the rollout's record: the record decides, whatever the page's cursor.
    const page = `/tenants/templates/${templateId}/rollouts/999999/tenants?cursor=not-a-cursor`;
    expect(expectErrorEnvelope(await api('GET', page, { token: client.token }), 404).code).toBe('rollout_not_found');
    expect(
      expectErrorEnvelope(await api('GET', `/tenants/templates/${templateId}/rollouts/999999`, { token: client.token }), 404)
        .code,
    ).toBe('rollout_not_found');
    await untilState(client.token, templateId, started.id, 'finished');
  });

  test('rollouts started at once: one runs, the others are told which; a pause and a cancel at once: one state', async () => {
    const { client, templateId } = await fleet(2);
    await api('PUT', `/tenants/templates/${templateId}`, { token: client.token, body: secondVersion() });
    const starts = await Promise.all(
      Array.from({ length: 6 }, () =>
        api('POST', `/tenants/templates/${templateId}/rollouts`, {
          token: client.token,
          body: { tenants: 'all', waveSize: 1, pauseSeconds: 3600 },
        }),
      ),
    );
    const started = starts.filter((answer) => answer.status === 202);
    expect(started).toHaveLength(1);
    const id = started[0]?.body.data.id;
    for (const refused of starts.filter((answer) => answer.status !== 202)) {
      expect(expectErrorEnvelope(refused, 409).code).toBe('rollout_in_progress');
    }
    const [paused, cancelled] = await Promise.all(
      ['pause', 'cancel'].map((verb) =>
        api('POST', `/tenants/templates/${templateId}/rollouts/${id}/${verb}`, { token: client.token }),
      ),
    );
    // Whichever came first, the rollout ends cancelled: a cancel takes a paused rollout too.
    expect(cancelled?.status).toBe(200);
    expect([200, 409]).toContain(paused?.status);
    expect((await rolloutOf(client.token, templateId, id)).state).toBe('cancelled');
  });
});
