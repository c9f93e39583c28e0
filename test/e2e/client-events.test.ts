/**
 * The integrator's events (docs/events.md), over the real pieces: the client sets its own webhook
 * through the twin's API, real causes make each event (an agent's failure report, a schedule's claim
 * of a slot that does not fire, a tenant's receiver answering 410), the twin's deliverer POSTs them to a
 * real HTTP receiver on loopback, signed with the client's secret, and each body is checked against
 * schemas/client-event.schema.json.
 */
import { randomUUID } from 'node:crypto';
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import type { ClientEvent, ClientEventOf } from '../../client/src/index.ts';
import { disableAfterMs } from '#functions/core/alerts/endpoint.ts';
import { fireDueSchedules } from '#functions/core/schedules/fire.ts';
import { putSchedule } from '#functions/core/schedules/schedules.ts';
import { putAll } from '#functions/core/store/dynamo.ts';
import * as stored from '#functions/core/store/entity-declarations.ts';
import clientEventSchema from '#schemas/client-event.schema.json' with { type: 'json' };
import { api, expectErrorEnvelope, newClient, newTenant } from '#test/support/api.ts';
import { scheduleFile } from '#test/support/schedules.ts';
import { agentToken, eventually, publish, retailBundle } from '#test/support/templates.ts';
import { type Received, type Reply, startReceiver } from '#test/support/webhook-receiver.ts';

const ajv = new Ajv2020({ allErrors: true, strict: false, discriminator: true });
addFormats(ajv);
const validateEvent = ajv.compile(clientEventSchema);

let receiver: Awaited<ReturnType<typeof startReceiver>>;
/** Paths that answer something else than 200, by path. */
const replies = new Map<string, Reply>();
beforeAll(async () => {
  receiver = await startReceiver();
  receiver.replyWith((request) => replies.get(request.path) ?? { status: 200 });
});
afterAll(() => receiver.close());

/** A new client whose events webhook is a path of its own on the receiver, and its signing secret. */
async function listeningClient() {
  const client = await newClient();
  const path = `/events/${randomUUID()}`;
  const set = await api('PATCH', '/tenants/settings', { token: client.token, body: { webhook: { url: receiver.url(path) } } });
  expect(set.status).toBe(200);
  const secret: string = set.body.data.webhook.signingSecret;
  /** The events received so far at the client's path, each verified with its secret and checked against the schema. */
  const received = () =>
    receiver.at(path).map((request: Received) => {
      new Webhook(secret).verify(request.body, request.headers as Record<string, string>);
      const event = JSON.parse(request.body) as ClientEvent & { timestamp: string };
      expect(validateEvent(event), ajv.errorsText(validateEvent.errors)).toBe(true);
      expect(request.headers['user-agent']).toBe('Service-Event-Webhook/1.0');
      return { event, webhookId: request.headers['webhook-id'] as string };
    });
  /** The first event of `type` to arrive (waiting for it). */
  const next = async <Type extends ClientEvent['type']>(
    type: Type,
    where: (event: ClientEventOf<Type>) => boolean = () => true,
  ) =>
    eventually(async () => {
      const found = received().find(({ event }) => event.type === type && where(event as ClientEventOf<Type>));
      return found && { ...found, event: found.event as ClientEventOf<Type> & { timestamp: string } };
    }, 30_000);
  return { ...client, path, secret, received, next };
}

/** A tenant of the client with the retail template, its agent online, and its flows' ids by key. */
async function tenantWithAgent(clientToken: string) {
  const templateId = await publish(clientToken, retailBundle());
  const tenant = await newTenant(clientToken, { templateId });
  const agent = await agentToken(tenant.token);
  await api('POST', '/agent/heartbeat', { token: agent });
  const own = (await api('GET', '/tenant', { token: tenant.token })).body.data;
  const flows: Record<string, number> = Object.fromEntries(
    own.flows.map((flow: { key: string; id: number }) => [flow.key, flow.id]),
  );
  return { tenant, agent, flows };
}

/** A load of `flowId` handed to the agent: the run it took. */
async function takenRun(tenantToken: string, agent: string, flowId: number) {
  const reload = await api('POST', '/tenant/templates/reload', {
    token: tenantToken,
    body: { items: [{ flowId, tokenId: 1, context: 'full' }] },
  });
  expect(reload.status).toBe(200);
  return eventually(async () => {
    const runs = (await api('POST', '/agent/heartbeat', { token: agent })).body.data.runs as { id: number; flowId: number }[];
    return runs.find((run) => run.flowId === flowId);
  });
}

describe("the client's events webhook (client token)", () => {
  test('set, read (never the secret), rotated, refused where unsafe, turned off and removed, as a tenant channel is', async () => {
    const client = await newClient();
    expect((await api('GET', '/tenants/settings', { token: client.token })).body.data).toEqual({ webhook: null });
    const set = await api('PATCH', '/tenants/settings', { token: client.token, body: { webhook: { url: receiver.url('/c') } } });
    const webhook = set.body.data.webhook;
    expect(webhook).toMatchObject({ url: receiver.url('/c'), enabled: true, signingSecret: expect.stringMatching(/^whsec_/) });
    expect((await api('GET', '/tenants/settings', { token: client.token })).body.data.webhook).toEqual({
      url: receiver.url('/c'),
      enabled: true,
      maxInFlight: 2,
      endpoint: { state: 'closed', stalls: 0, inFlight: 0, maxInFlight: 2 },
      secretCreatedAt: webhook.secretCreatedAt,
    });
    const rotated = await api('POST', '/tenants/settings/webhook/secret', { token: client.token });
    expect(rotated.body.data.webhook.signingSecret).toMatch(/^whsec_/);
    expect(rotated.body.data.webhook.signingSecret).not.toBe(webhook.signingSecret);

    for (const url of ['https://10.0.0.1/hook', 'https://169.254.169.254/latest', 'ftp://hooks.example.com/x']) {
      const refused = expectErrorEnvelope(
        await api('PATCH', '/tenants/settings', { token: client.token, body: { webhook: { url } } }),
        400,
      );
      expect(refused.errors[0]).toMatchObject({ location: 'body', pointer: '/webhook/url' });
    }
    const off = await api('PATCH', '/tenants/settings', { token: client.token, body: { webhook: { enabled: false } } });
    expect(off.body.data.webhook).toMatchObject({ enabled: false });
    expect((await api('PATCH', '/tenants/settings', { token: client.token, body: { webhook: null } })).body.data).toEqual({
      webhook: null,
    });
    expectErrorEnvelope(await api('POST', '/tenants/settings/webhook/secret', { token: client.token }), 409);
    // A tenant token is not the client's: another kind of token is 403, and the tenant's own settings are apart.
    const tenant = await newTenant(client.token);
    expectErrorEnvelope(await api('GET', '/tenants/settings', { token: tenant.token }), 403);
    expect((await api('GET', '/tenant/settings', { token: tenant.token })).body.data).toEqual({
      alertChannels: { webhook: null },
    });
  });
});

describe('events, caused for real, arrive signed and as the schema says', () => {
  test('run.failed: an agent reports a load failed; a success, or a second report, sends nothing', async () => {
    const client = await listeningClient();
    const { tenant, agent, flows } = await tenantWithAgent(client.token);
    const run = await takenRun(tenant.token, agent, flows['load-orders'] as number);
    await api('POST', `/agent/runs/${run.id}`, { token: agent, body: { status: 'running', message: 'connecting' } });
    const reportId = `report-${crypto.randomUUID()}`;
    const failed = await api('POST', `/agent/runs/${run.id}`, {
      token: agent,
      body: { status: 'failed', message: 'Connection refused by erp:5432' },
      headers: { 'x-request-id': reportId },
    });
    expect(failed.body.data).toMatchObject({ id: run.id, status: 'failed', message: 'Connection refused by erp:5432' });
    expectErrorEnvelope(await api('POST', `/agent/runs/${run.id}`, { token: agent, body: { status: 'failed' } }), 409);

    const { event } = await client.next('run.failed');
    expect(event.data).toEqual({
      tenantId: tenant.id,
      runId: run.id,
      agentId: 1,
      flowId: flows['load-orders'],
      batchId: expect.any(String),
      context: 'full',
      message: 'Connection refused by erp:5432',
    });
    const other = await takenRun(tenant.token, agent, flows['load-stock'] as number);
    await api('POST', `/agent/runs/${other.id}`, { token: agent, body: { status: 'succeeded' } });
    // Its log: one event delivery, delivered.
    const log = await eventually(async () => {
      const page = (await api('GET', '/tenants/deliveries', { token: client.token })).body.data;
      return page.length === 1 && page[0].status === 'delivered' ? page : undefined;
    });
    expect(log[0]).toMatchObject({
      type: 'run.failed',
      webhookId: expect.stringMatching(/^msg_/),
      attempts: [{ statusCode: 200 }],
      // The report's request id: the integrator finds the request that caused it.
      requestId: reportId,
    });
    expect(client.received()).toHaveLength(1);
  });

  test('schedule.missed: an inactive tenant, a slot an hour late, and the slots an outage skipped for a later one', async () => {
    const client = await listeningClient();
    const { tenant, flows } = await tenantWithAgent(client.token);
    const slot = '2021-05-03T09:30:00.000Z';
    const nextDay = '2021-05-04T09:30:00.000Z';
    const schedule = async (id: number) => {
      await putSchedule(tenant.id, id, scheduleFile(id, [flows['load-orders'] as number]), {
        actor: 'test',
        now: Date.parse('2021-05-03T00:00:00Z'),
      });
      return { tenantId: tenant.id, scheduleId: id, dueAt: slot };
    };
    const message = (due: unknown[], now: number) => ({ now, startedAt: Date.now(), schedules: due as never[] });

    // The tenant active: a tick two hours after the slot misses it; a tick the next day fires that day's slot instead.
    expect(await fireDueSchedules(message([await schedule(1)], Date.parse(slot) + 2 * 3_600_000))).toEqual({ missed: 1 });
    expect(await fireDueSchedules(message([await schedule(2)], Date.parse(nextDay) + 5_000))).toEqual({ fired: 1 });
    const late = await client.next('schedule.missed', (event) => event.data.scheduleId === 1);
    expect(late.event.data).toEqual({
      tenantId: tenant.id,
      scheduleId: 1,
      reason: 'late',
      slot,
      firedSlot: null,
      nextFireAt: nextDay,
    });
    const superseded = await client.next('schedule.missed', (event) => event.data.scheduleId === 2);
    expect(superseded.event.data).toMatchObject({ reason: 'superseded', slot, firedSlot: nextDay });

    // Deactivated: its slot is refused, and said so; the same message again (SQS delivers twice) sends nothing more.
    const third = await schedule(3);
    expect((await api('POST', `/tenants/${tenant.id}/deactivate`, { token: client.token })).status).toBe(200);
    expect(await fireDueSchedules(message([third], Date.parse(slot) + 5_000))).toEqual({ tenant_inactive: 1 });
    expect(await fireDueSchedules(message([third], Date.parse(slot) + 5_000))).toEqual({ moved_on: 1 });
    const inactive = await client.next('schedule.missed', (event) => event.data.scheduleId === 3);
    expect(inactive.event.data).toMatchObject({ reason: 'tenant_inactive', slot, firedSlot: null });
    await eventually(async () => (client.received().length === 3 ? true : undefined));
  });

  test("webhook.endpoint_disabled: a tenant's receiver answers 410; its client hears once", async () => {
    const client = await listeningClient();
    const tenant = await newTenant(client.token);
    const gone = `/gone/${randomUUID()}`;
    replies.set(gone, { status: 410 });
    await api('PATCH', '/tenant/settings', {
      token: tenant.token,
      body: { alertChannels: { webhook: { url: receiver.url(gone) } } },
    });
    const alert = await api('POST', '/tenant/alerts', {
      token: tenant.token,
      body: { nome: 'Daily', channels: { webhook: true }, content: [{ type: 'text', nome: 'Intro' }] },
    });
    const fired = await api('POST', `/tenant/alerts/${alert.body.data.id}/fire`, {
      token: tenant.token,
      body: { user: { id: 7 } },
    });
    expect(fired.status).toBe(202);

    const { event } = await client.next('webhook.endpoint_disabled');
    const channel = (await api('GET', '/tenant/settings', { token: tenant.token })).body.data.alertChannels.webhook;
    expect(channel).toMatchObject({ enabled: false, disabledReason: expect.stringMatching(/410/) });
    expect(event.data).toEqual({
      tenantId: tenant.id,
      reason: 'gone',
      message: channel.disabledReason,
      disabledAt: channel.disabledAt,
    });
    expect(receiver.at(gone)).toHaveLength(1);
    expect(client.received()).toHaveLength(1);
  });
  test("webhook.endpoint_disabled: a tenant's receiver silent for days; its client hears that too", async () => {
    const client = await listeningClient();
    const tenant = await newTenant(client.token);
    const silent = `/silent/${randomUUID()}`;
    replies.set(silent, { status: 200, drop: true });
    await api('PATCH', '/tenant/settings', {
      token: tenant.token,
      body: { alertChannels: { webhook: { url: receiver.url(silent) } } },
    });
    // As the breaker is after days of stalled probes: paused since long ago, its pause over now (the next attempt probes).
    const longAgo = Date.now() - disableAfterMs - 3_600_000;
    await putAll([
      {
        ...stored.webhookEndpoint.key({ tenantId: tenant.id }),
        tenantId: tenant.id,
        url: receiver.url(silent),
        stalls: 40,
        opens: 30,
        openedAt: longAgo,
        openUntil: Date.now() - 1_000,
        expiresAt: Math.floor(Date.now() / 1000) + 86_400,
      },
    ]);
    const alert = await api('POST', '/tenant/alerts', {
      token: tenant.token,
      body: { nome: 'Daily', channels: { webhook: true }, content: [{ type: 'text', nome: 'Intro' }] },
    });
    await api('POST', `/tenant/alerts/${alert.body.data.id}/fire`, { token: tenant.token, body: { user: { id: 7 } } });
    const { event } = await client.next('webhook.endpoint_disabled');
    expect(event.data).toMatchObject({
      tenantId: tenant.id,
      reason: 'no_answer',
      message: expect.stringMatching(/^No answer for 3 days/),
    });
    expect(client.received()).toHaveLength(1);
  });
});

describe("the client's delivery log", () => {
  test('a failed event delivery is redelivered once the webhook is back, with its webhook-id; another client sees none of it', async () => {
    const client = await listeningClient();
    const { tenant, agent, flows } = await tenantWithAgent(client.token);
    // The client's receiver is gone: the delivery fails at once and the client's webhook is disabled.
    replies.set(client.path, { status: 410 });
    const run = await takenRun(tenant.token, agent, flows['load-orders'] as number);
    await api('POST', `/agent/runs/${run.id}`, { token: agent, body: { status: 'failed' } });
    const [failed] = await eventually(async () => {
      const page = (await api('GET', '/tenants/deliveries', { token: client.token })).body.data;
      return page[0]?.status === 'failed' ? page : undefined;
    });
    expect(failed).toMatchObject({ type: 'run.failed', failureReason: expect.stringMatching(/410/) });
    expect((await api('GET', '/tenants/settings', { token: client.token })).body.data.webhook).toMatchObject({ enabled: false });
    const refused = await api('POST', `/tenants/deliveries/${failed.id}/redeliver`, { token: client.token });
    expect(expectErrorEnvelope(refused, 409).code).toBe('channel_inactive');
    // While the webhook is off, events are not kept.
    const ignored = await takenRun(tenant.token, agent, flows['load-stock'] as number);
    await api('POST', `/agent/runs/${ignored.id}`, { token: agent, body: { status: 'failed' } });

    replies.delete(client.path);
    await api('PATCH', '/tenants/settings', { token: client.token, body: { webhook: { enabled: true } } });
    const again = await api('POST', `/tenants/deliveries/${failed.id}/redeliver`, { token: client.token });
    expect(again.status).toBe(202);
    const delivered = await eventually(async () => {
      const one = (await api('GET', `/tenants/deliveries/${failed.id}`, { token: client.token })).body.data;
      return one.status === 'delivered' ? one : undefined;
    });
    expect(delivered.webhookId).toBe(failed.webhookId);
    const arrivals = client.received();
    expect(arrivals.map(({ webhookId }) => webhookId)).toEqual([failed.webhookId, failed.webhookId]);
    expect((await api('GET', '/tenants/deliveries', { token: client.token })).body.data).toHaveLength(1);

    const stranger = await newClient();
    expect((await api('GET', '/tenants/deliveries', { token: stranger.token })).body.data).toEqual([]);
    expectErrorEnvelope(await api('GET', `/tenants/deliveries/${failed.id}`, { token: stranger.token }), 404);
    expectErrorEnvelope(await api('POST', `/tenants/deliveries/${failed.id}/redeliver`, { token: stranger.token }), 404);
  });
});
