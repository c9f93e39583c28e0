import { parse } from 'yaml';
import { describe, expect, test } from 'vitest';
import { api, expectErrorEnvelope } from '#test/support/api.ts';
import { scheduleFile, tenantWithFlows } from '#test/support/schedules.ts';

const yamlSchedule = (id: number, flowId: number) => `fileName: nightly.yaml
header:
  id: ${id}
  kind: schedule
body:
  nome: Nightly
  ativo: true
  timezone: Asia/Kathmandu
  flows:
    - flow_etl_id: ${flowId}
      context: full
      priority: high
  triggers:
    - type: Day
      start_when: 7:05
    - type: Week
      period: 0
      start_when: "18:30"
`;

describe('schedules API', () => {
  test('PUT as YAML creates version 1 with audit fields; GET returns it as YAML or JSON; Day times round-trip as sent', async () => {
    const { tenant, flows } = await tenantWithFlows();
    const put = await api('PUT', '/tenant/schedules/7', {
      token: tenant.token,
      rawBody: yamlSchedule(7, flows['load-orders'] as number),
      headers: { 'content-type': 'application/yaml' },
    });
    expect(put.status).toBe(201);
    expect(put.headers.get('etag')).toBe('"1"');
    const body = put.body.data.body;
    expect(body).toMatchObject({ version: 1, createdBy: `tenant:${tenant.id}`, updatedBy: `tenant:${tenant.id}` });
    expect(body.createdAt).toBe(body.updatedAt);
    expect(body.triggers[0]).toEqual({ type: 'Day', start_when: '7:05' });
    expect(body.flows[0]).toEqual({ flow_etl_id: flows['load-orders'], context: 'full', priority: 'high' });

    const asYaml = await api('GET', '/tenant/schedules/7', { token: tenant.token, headers: { accept: 'application/yaml' } });
    expect(asYaml.status).toBe(200);
    expect(asYaml.headers.get('content-type')).toMatch(/^application\/yaml/);
    expect(asYaml.headers.get('etag')).toBe('"1"');
    expect(asYaml.body).toContain('start_when: "7:05"');
    // A YAML 1.1 reader (where an unquoted 7:05 is a number) gets the same file back.
    expect(parse(asYaml.body, { version: '1.1' })).toEqual(put.body.data);

    const asJson = await api('GET', '/tenant/schedules/7', { token: tenant.token });
    expect(asJson.body).toEqual({ status: 'success', data: put.body.data });
  });

  test('PUT with the same content keeps the version; a change moves it on; a stale If-Match is 412', async () => {
    const { tenant, flows } = await tenantWithFlows();
    const file = scheduleFile(3, [flows['load-orders'] as number]);
    const first = await api('PUT', '/tenant/schedules/3', { token: tenant.token, body: file });
    expect(first.status).toBe(201);
    // Sending back what was read (with its read-only fields) changes nothing.
    const same = await api('PUT', '/tenant/schedules/3', { token: tenant.token, body: first.body.data });
    expect(same.status).toBe(200);
    expect(same.body.data.body.version).toBe(1);

    const renamed = { ...file, body: { ...file.body, nome: 'Renamed' } };
    const second = await api('PUT', '/tenant/schedules/3', {
      token: tenant.token,
      body: renamed,
      headers: { 'if-match': '"1"' },
    });
    expect(second.status).toBe(200);
    expect(second.headers.get('etag')).toBe('"2"');
    expect(second.body.data.body).toMatchObject({ version: 2, nome: 'Renamed', createdAt: first.body.data.body.createdAt });

    const stale = await api('PUT', '/tenant/schedules/3', {
      token: tenant.token,
      body: { ...file, body: { ...file.body, nome: 'Lost update' } },
      headers: { 'if-match': '"1"' },
    });
    expect(expectErrorEnvelope(stale, 412)).toMatchObject({ code: 'version_mismatch' });
    expect((await api('GET', '/tenant/schedules/3', { token: tenant.token })).body.data.body.nome).toBe('Renamed');

    const staleDelete = await api('DELETE', '/tenant/schedules/3', { token: tenant.token, headers: { 'if-match': '"1"' } });
    expectErrorEnvelope(staleDelete, 412);
    const deleted = await api('DELETE', '/tenant/schedules/3', { token: tenant.token, headers: { 'if-match': '"2"' } });
    expect(deleted.body).toEqual({ status: 'success', data: true });
    expectErrorEnvelope(await api('GET', '/tenant/schedules/3', { token: tenant.token }), 404);
    expectErrorEnvelope(await api('DELETE', '/tenant/schedules/3', { token: tenant.token }), 404);
  });

  test('every problem of a file is reported at its pointer, and nothing is stored', async () => {
    const { tenant, flows } = await tenantWithFlows();
    const file = scheduleFile(4, [flows['load-orders'] as number, 999_999]);
    const broken = {
      ...file,
      body: {
        ...file.body,
        timezone: 'Mars/Olympus_Mons',
        triggers: [
          { type: 'Minute', period: 5, start_when: '2026-01-01T00:00', start_time: '08:00', end_time: '18:00' },
          { type: 'Week', period: 7, start_when: '24:00' },
        ],
      },
    };
    const answer = expectErrorEnvelope(await api('PUT', '/tenant/schedules/4', { token: tenant.token, body: broken }), 400);
    expect(answer.message).toBe('Invalid schedule: /body/triggers/1/period must be <= 6');
    expect(answer.errors).toEqual([
      { location: 'body', pointer: '/body/triggers/1/period', message: 'must be <= 6' },
      { location: 'body', pointer: '/body/triggers/1/start_when', message: 'must be a time HH:MM between 00:00 and 23:59' },
      { location: 'body', pointer: '/body/timezone', message: 'is not a known IANA time zone (e.g. America/Sao_Paulo)' },
      {
        location: 'body',
        pointer: '/body/triggers/0/type',
        message: "is Minute, which needs the tenant's schedulingGranularity to be minutes",
      },
      { location: 'body', pointer: '/body/flows/1/flow_etl_id', message: 'is not a flow of this tenant' },
    ]);
    const mismatch = await api('PUT', '/tenant/schedules/5', { token: tenant.token, body: scheduleFile(4, []) });
    expect(expectErrorEnvelope(mismatch, 400).errors).toEqual([
      { location: 'body', pointer: '/header/id', message: 'must equal the id in the URL (5)' },
    ]);
    const listed = await api('GET', '/tenant/schedules', { token: tenant.token });
    expect(listed.body.data).toEqual([]);
  });

  test('another tenant cannot read, change, preview or delete a schedule: 404', async () => {
    const owner = await tenantWithFlows();
    const other = await tenantWithFlows();
    const file = scheduleFile(9, [owner.flows['load-orders'] as number]);
    expect((await api('PUT', '/tenant/schedules/9', { token: owner.tenant.token, body: file })).status).toBe(201);
    for (const path of ['/tenant/schedules/9', '/tenant/schedules/9/next', '/tenant/schedules/9/runs']) {
      expectErrorEnvelope(await api('GET', path, { token: other.tenant.token }), 404);
    }
    // The runs page is read beside the schedule: a cursor it refuses still answers that the schedule is not there.
    const refusedCursor = await api('GET', '/tenant/schedules/9/runs?cursor=not-a-cursor', { token: other.tenant.token });
    expect(expectErrorEnvelope(refusedCursor, 404).code).toBe('schedule_not_found');
    expectErrorEnvelope(await api('DELETE', '/tenant/schedules/9', { token: other.tenant.token }), 404);
    // The same id under another tenant is that tenant's own schedule: it leaves the owner's alone.
    const theirs = scheduleFile(9, [other.flows['load-orders'] as number]);
    const put = await api('PUT', '/tenant/schedules/9', {
      token: other.tenant.token,
      body: { ...theirs, body: { ...theirs.body, nome: 'Theirs' } },
    });
    expect(put.status).toBe(201);
    const owners = (await api('GET', '/tenant/schedules/9', { token: owner.tenant.token })).body.data.body;
    expect(owners).toMatchObject({ nome: 'Nightly loads', version: 1 });
  });

  test('the list is paginated and shows each schedule with its next fire', async () => {
    const { tenant, flows } = await tenantWithFlows();
    for (const id of [1, 2, 3]) {
      const file = scheduleFile(id, [flows['load-stock'] as number]);
      const inactive = id === 2 ? { ...file, body: { ...file.body, ativo: false } } : file;
      expect((await api('PUT', `/tenant/schedules/${id}`, { token: tenant.token, body: inactive })).status).toBe(201);
    }
    const first = await api('GET', '/tenant/schedules?limit=2', { token: tenant.token });
    expect(first.body.data.map((item: { id: number }) => item.id)).toEqual([1, 2]);
    const rest = await api('GET', `/tenant/schedules?limit=2&cursor=${encodeURIComponent(first.body.nextCursor)}`, {
      token: tenant.token,
    });
    expect(rest.body.data.map((item: { id: number }) => item.id)).toEqual([3]);
    const [active, inactive] = first.body.data;
    expect(active).toMatchObject({ nome: 'Nightly loads', ativo: true, timezone: 'America/Sao_Paulo', version: 1 });
    expect(Date.parse(active.nextFireAt)).toBeGreaterThan(Date.now());
    expect(inactive).toMatchObject({ ativo: false, nextFireAt: null });
  });

  test('next previews the fire instants in UTC and local time; an inactive schedule has none', async () => {
    const { tenant, flows } = await tenantWithFlows();
    const file = scheduleFile(1, [flows['load-orders'] as number], [{ type: 'Day', start_when: '06:30' }]);
    await api('PUT', '/tenant/schedules/1', { token: tenant.token, body: file });
    const preview = await api('GET', '/tenant/schedules/1/next?count=3', { token: tenant.token });
    expect(preview.status).toBe(200);
    const fires = preview.body.data.fires as Array<{ utc: string; local: string }>;
    expect(fires).toHaveLength(3);
    for (const fire of fires) {
      // São Paulo has kept UTC-03:00 all year since 2019.
      expect(fire.local).toMatch(/T06:30:00-03:00$/);
      expect(fire.utc).toMatch(/T09:30:00\.000Z$/);
    }
    expect(Date.parse(fires[1]?.utc ?? '') - Date.parse(fires[0]?.utc ?? '')).toBe(24 * 3600 * 1000);
    expectErrorEnvelope(await api('GET', '/tenant/schedules/1/next?count=0', { token: tenant.token }), 400);
    expectErrorEnvelope(await api('GET', '/tenant/schedules/1/next?count=101', { token: tenant.token }), 400);
    await api('PUT', '/tenant/schedules/1', { token: tenant.token, body: { ...file, body: { ...file.body, ativo: false } } });
    expect((await api('GET', '/tenant/schedules/1/next', { token: tenant.token })).body.data).toMatchObject({
      ativo: false,
      fires: [],
    });
  });
});

describe('scheduling granularity', () => {
  const minuteTrigger = { type: 'Minute', period: 15, start_when: '2026-01-01T00:00', start_time: '00:00', end_time: '23:59' };

  test('Minute triggers need minutes; hours cannot come back while one exists (409 listing them)', async () => {
    const { client, tenant, flows } = await tenantWithFlows();
    const file = scheduleFile(1, [flows['load-orders'] as number], [minuteTrigger as never]);
    const refused = await api('PUT', '/tenant/schedules/1', { token: tenant.token, body: file });
    expect(expectErrorEnvelope(refused, 400).errors).toEqual([
      {
        location: 'body',
        pointer: '/body/triggers/0/type',
        message: "is Minute, which needs the tenant's schedulingGranularity to be minutes",
      },
    ]);
    const patched = await api('PATCH', `/tenants/${tenant.id}`, {
      token: client.token,
      body: { schedulingGranularity: 'minutes' },
    });
    expect(patched.body.data).toMatchObject({ id: tenant.id, schedulingGranularity: 'minutes' });
    expect((await api('GET', '/tenant', { token: tenant.token })).body.data.schedulingGranularity).toBe('minutes');
    expect((await api('PUT', '/tenant/schedules/1', { token: tenant.token, body: file })).status).toBe(201);

    const lowered = await api('PATCH', `/tenants/${tenant.id}`, {
      token: client.token,
      body: { schedulingGranularity: 'hours' },
    });
    const conflict = expectErrorEnvelope(lowered, 409);
    expect(conflict.code).toBe('minute_triggers_in_use');
    expect(conflict.errors).toEqual([
      { location: 'body', pointer: '/schedulingGranularity', message: 'schedule 1 ("Nightly loads") has Minute triggers' },
    ]);

    // Once the Minute trigger is gone, hours is accepted.
    const daily = scheduleFile(1, [flows['load-orders'] as number]);
    expect((await api('PUT', '/tenant/schedules/1', { token: tenant.token, body: daily })).status).toBe(200);
    const accepted = await api('PATCH', `/tenants/${tenant.id}`, {
      token: client.token,
      body: { schedulingGranularity: 'hours' },
    });
    expect(accepted.body.data.schedulingGranularity).toBe('hours');
  });

  test("PATCH checks its body, and another client's tenant is 404", async () => {
    const { tenant } = await tenantWithFlows();
    const stranger = await tenantWithFlows();
    const bad = await api('PATCH', `/tenants/${tenant.id}`, {
      token: stranger.client.token,
      body: { schedulingGranularity: 'seconds' },
    });
    expectErrorEnvelope(bad, 400);
    const foreign = await api('PATCH', `/tenants/${tenant.id}`, {
      token: stranger.client.token,
      body: { schedulingGranularity: 'minutes' },
    });
    expectErrorEnvelope(foreign, 404);
  });
});
