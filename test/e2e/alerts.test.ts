/**
 * Alerts delivered by webhook, over the real pieces: the twin's API, the webhook queue (fauxqs),
 * the deliverer behind its poller, the payload bucket, and a real HTTP receiver on loopback. The
 * test twin retries a second apart instead of 5 s to 10 h.
 */
import { ReceiveMessageCommand, SQSClient } from '@aws-sdk/client-sqs';
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, describe, expect, inject, test, vi } from 'vitest';
import { tenantOwner } from '#functions/core/webhooks/owner.ts';
import { updateAlert } from '#functions/core/alerts/alerts.ts';
import { maxWebhookBodyBytes } from '#functions/core/alerts/deliveries.ts';
import { maxBodyBytes } from '#functions/core/api/request-body.ts';
import { findDelivery } from '#functions/core/alerts/alert-repository.ts';
import { db } from '#functions/core/store/dynamo.ts';
import { getPayload } from '#functions/core/store/payloads.ts';
import alertWebhookSchema from '#schemas/alert-webhook.schema.json' with { type: 'json' };
import textSchema from '#schemas/text.schema.json' with { type: 'json' };
import { api, expectErrorEnvelope, newClient, newTenant } from '#test/support/api.ts';
import { eventually } from '#test/support/templates.ts';
import { type Received, startReceiver } from '#test/support/webhook-receiver.ts';

const ajv = new Ajv2020({ allErrors: true, strict: false });
addFormats(ajv);
ajv.addSchema(textSchema);
const validatePayload = ajv.compile(alertWebhookSchema);

let receiver: Awaited<ReturnType<typeof startReceiver>>;
beforeAll(async () => {
  receiver = await startReceiver();
});
afterAll(() => receiver.close());

const everyKind = [
  { type: 'text', nome: 'Intro', generated: { text: 'Sales are up' } },
  { type: 'ai', nome: 'Summary', generated: { text: 'Up 12% on last week' } },
  {
    type: 'report',
    nome: 'Report',
    generated: { pdf: 'https://files.example.com/r.pdf', xlsx: 'https://files.example.com/r.xlsx' },
  },
  { type: 'chart', nome: 'Board', generated: { kind: 'dashboard', url: 'https://bi.example.com/d/1', format: 'png' } },
  { type: 'chart', nome: 'Bars', generated: { chart: 'https://files.example.com/c.png' } },
];

/** A tenant with a webhook pointing at `path` on the receiver, and one alert using it. */
async function alertingTenant(path: string, replyStatus = 200) {
  const client = await newClient();
  const tenant = await newTenant(client.token);
  receiver.replyWith((request) => (request.path === path ? { status: replyStatus } : { status: 200 }));
  const settings = await api('PATCH', '/tenant/settings', {
    token: tenant.token,
    body: { alertChannels: { webhook: { url: receiver.url(path) } } },
  });
  expect(settings.status).toBe(200);
  const alert = await api('POST', '/tenant/alerts', {
    token: tenant.token,
    body: {
      nome: 'Daily sales',
      channels: { webhook: true },
      content: [{ type: 'text', nome: 'Intro', generated: { text: 'Hi' } }],
    },
  });
  expect(alert.status).toBe(201);
  const secret: string = settings.body.data.alertChannels.webhook.signingSecret;
  return { client, tenant, alertId: alert.body.data.id as number, secret };
}

const fire = (token: string, alertId: number, body: unknown = { user: { id: 7, email: 'ana@acme.com' }, content: everyKind }) =>
  api('POST', `/tenant/alerts/${alertId}/fire`, { token, body });

const deliveryOf = (token: string, id: number) => api('GET', `/tenant/deliveries/${id}`, { token });

async function settled(token: string, id: number, status: string, timeoutMs = 30_000) {
  return eventually(async () => {
    const delivery = (await deliveryOf(token, id)).body.data;
    return delivery.status === status ? delivery : undefined;
  }, timeoutMs);
}

describe('tenant settings', () => {
  test('a webhook gets a signing secret shown once; GET never shows it; bad URLs are 400 at their pointer', async () => {
    const client = await newClient();
    const tenant = await newTenant(client.token);
    expect((await api('GET', '/tenant/settings', { token: tenant.token })).body.data).toEqual({
      alertChannels: { webhook: null },
    });
    const set = await api('PATCH', '/tenant/settings', {
      token: tenant.token,
      body: { alertChannels: { webhook: { url: receiver.url('/a') } } },
    });
    const webhook = set.body.data.alertChannels.webhook;
    expect(webhook).toMatchObject({ url: receiver.url('/a'), enabled: true, signingSecret: expect.stringMatching(/^whsec_/) });
    expect(Buffer.from(webhook.signingSecret.slice(6), 'base64').length).toBeGreaterThanOrEqual(24);
    const read = (await api('GET', '/tenant/settings', { token: tenant.token })).body.data.alertChannels.webhook;
    expect(read).toEqual({
      url: receiver.url('/a'),
      enabled: true,
      maxInFlight: 2,
      // The endpoint as the deliverer sees it: answering, nothing in flight.
      endpoint: { state: 'closed', stalls: 0, inFlight: 0, maxInFlight: 2 },
      secretCreatedAt: webhook.secretCreatedAt,
    });

    const rotated = await api('POST', '/tenant/settings/webhook/secret', { token: tenant.token });
    expect(rotated.body.data.alertChannels.webhook.signingSecret).not.toBe(webhook.signingSecret);

    for (const url of [
      'ftp://hooks.example.com/x',
      'https://user:pass@hooks.example.com/x',
      'https://hooks.example.com/x#frag',
      `https://hooks.example.com/${'a'.repeat(2050)}`,
      'https://10.0.0.1/hook',
      'https://169.254.169.254/latest',
      'not a url',
    ]) {
      const answer = await api('PATCH', '/tenant/settings', {
        token: tenant.token,
        body: { alertChannels: { webhook: { url } } },
      });
      expect(expectErrorEnvelope(answer, 400).errors[0]?.pointer ?? '', url).toMatch(/^\/alertChannels\/webhook(\/url)?$/);
    }
    const removed = await api('PATCH', '/tenant/settings', { token: tenant.token, body: { alertChannels: { webhook: null } } });
    expect(removed.body.data).toEqual({ alertChannels: { webhook: null } });
  });
});

describe('alerts', () => {
  test("create, read, list, change, delete; another tenant's alert is 404", async () => {
    const { tenant, alertId } = await alertingTenant('/crud');
    const other = await newTenant((await newClient()).token);
    expect((await api('GET', `/tenant/alerts/${alertId}`, { token: tenant.token })).body.data).toMatchObject({
      id: alertId,
      nome: 'Daily sales',
      channels: { webhook: true },
    });
    const changed = await api('PATCH', `/tenant/alerts/${alertId}`, { token: tenant.token, body: { nome: 'Weekly sales' } });
    expect(changed.body.data.nome).toBe('Weekly sales');
    expect(
      (await api('GET', '/tenant/alerts', { token: tenant.token })).body.data.map((alert: { id: number }) => alert.id),
    ).toEqual([alertId]);
    for (const [method, path] of [
      ['GET', `/tenant/alerts/${alertId}`],
      ['DELETE', `/tenant/alerts/${alertId}`],
      ['GET', `/tenant/alerts/${alertId}/deliveries`],
    ] as const) {
      expectErrorEnvelope(await api(method, path, { token: other.token }), 404);
    }
    expectErrorEnvelope(await fire(other.token, alertId), 404);
    const invalid = await api('POST', '/tenant/alerts', {
      token: tenant.token,
      body: { nome: 'x', channels: { webhook: true }, content: [{ type: 'chart', nome: 'c', generated: { kind: 'pie' } }] },
    });
    expectErrorEnvelope(invalid, 400);
    expect((await api('DELETE', `/tenant/alerts/${alertId}`, { token: tenant.token })).status).toBe(200);
    expectErrorEnvelope(await api('GET', `/tenant/alerts/${alertId}`, { token: tenant.token }), 404);
  });

  test('preview returns the payload and sends nothing', async () => {
    const { tenant, alertId } = await alertingTenant('/preview');
    const preview = await api('POST', `/tenant/alerts/${alertId}/preview`, {
      token: tenant.token,
      body: { user: { id: 'u-9' } },
    });
    expect(preview.status).toBe(200);
    const { payload, bytes, withinLimit } = preview.body.data;
    expect(validatePayload(payload), JSON.stringify(validatePayload.errors)).toBe(true);
    expect(payload).toMatchObject({ alert: { nome: 'Daily sales', id: alertId }, user: { id: 'u-9' } });
    expect(payload.content).toEqual([{ type: 'text', nome: 'Intro', generated: { text: 'Hi' } }]);
    expect(bytes).toBe(Buffer.byteLength(JSON.stringify(payload)));
    expect(withinLimit).toBe(true);
    await new Promise((resolve) => setTimeout(resolve, 1500));
    expect(receiver.at('/preview')).toEqual([]);
  });
});

describe('webhook delivery', () => {
  test('fire POSTs the exact headers and a schema-valid body with every block kind; the signature verifies', async () => {
    const { tenant, alertId, secret } = await alertingTenant('/exact');
    const queued = await fire(tenant.token, alertId);
    expect(queued.status).toBe(202);
    expect(queued.body.data).toMatchObject({
      id: expect.any(Number),
      status: 'queued',
      webhookId: expect.stringMatching(/^msg_/),
    });
    const delivery = await settled(tenant.token, queued.body.data.id, 'delivered');
    expect(delivery.trigger).toBe('fire');
    expect(delivery.attempts).toEqual([
      {
        at: expect.any(String),
        url: receiver.url('/exact'),
        durationMs: expect.any(Number),
        statusCode: 200,
        responseBody: 'ok',
      },
    ]);

    const [request] = receiver.at('/exact') as [Received];
    expect(request.headers).toMatchObject({
      'content-type': 'application/json',
      'user-agent': 'Service-Alert-Webhook/1.0',
      'webhook-id': queued.body.data.webhookId,
      'webhook-timestamp': expect.stringMatching(/^\d{10}$/),
      'webhook-signature': expect.stringMatching(/^v1,[A-Za-z0-9+/]+=*$/),
    });
    const body = JSON.parse(request.body);
    expect(validatePayload(body), JSON.stringify(validatePayload.errors)).toBe(true);
    expect(body).toEqual({
      alert: { nome: 'Daily sales', id: alertId },
      user: { id: 7, email: 'ana@acme.com' },
      content: everyKind,
      timestamp: expect.stringMatching(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/),
    });
    // The receiver's check, with the standardwebhooks package.
    expect(new Webhook(secret).verify(request.body, request.headers as Record<string, string>)).toEqual(body);
    expect(() =>
      new Webhook(`whsec_${Buffer.alloc(32, 1).toString('base64')}`).verify(
        request.body,
        request.headers as Record<string, string>,
      ),
    ).toThrow();

    const log = await api('GET', `/tenant/alerts/${alertId}/deliveries`, { token: tenant.token });
    expect(log.body.data.map((entry: { id: number }) => entry.id)).toEqual([queued.body.data.id]);
    // Another tenant (with no deliveries of its own) cannot read or redeliver it.
    const stranger = await newTenant((await newClient()).token);
    expectErrorEnvelope(await deliveryOf(stranger.token, queued.body.data.id), 404);
    expectErrorEnvelope(await api('POST', `/tenant/deliveries/${queued.body.data.id}/redeliver`, { token: stranger.token }), 404);
  });

  test('a 500 is retried on the schedule with the same webhook-id, then the message goes to the DLQ and the delivery is failed', async () => {
    const { tenant, alertId } = await alertingTenant('/always-500', 500);
    const queued = await fire(tenant.token, alertId);
    const delivery = await settled(tenant.token, queued.body.data.id, 'failed', 40_000);
    expect(delivery.attempts).toHaveLength(8);
    expect(delivery.attempts.every((attempt: { statusCode: number }) => attempt.statusCode === 500)).toBe(true);
    expect(delivery.failureReason).toMatch(/^Gave up after 8 attempts; last: HTTP 500/);
    expect(new Set(receiver.at('/always-500').map((request) => request.headers['webhook-id']))).toEqual(
      new Set([queued.body.data.webhookId]),
    );
    const sqs = new SQSClient({ endpoint: inject('sqsEndpoint') });
    const deadLetters = await eventually(async () => {
      const received = await sqs.send(
        new ReceiveMessageCommand({
          QueueUrl: inject('deadLetterQueueUrls').webhook,
          MaxNumberOfMessages: 10,
          WaitTimeSeconds: 1,
        }),
      );
      // Delivery ids are per tenant, and the queue is every test's.
      const ours = (received.Messages ?? []).filter((message) => {
        const { tenantId, deliveryId } = JSON.parse(message.Body ?? '{}');
        return tenantId === tenant.id && deliveryId === queued.body.data.id;
      });
      return ours.length > 0 ? ours : undefined;
    });
    expect(JSON.parse(deadLetters[0]?.Body ?? '{}')).toMatchObject({ tenantId: tenant.id, deliveryId: queued.body.data.id });
    sqs.destroy();

    // Redelivery: a new round with the same webhook-id, delivered once the receiver is back.
    receiver.replyWith(() => ({ status: 200 }));
    const again = await api('POST', `/tenant/deliveries/${queued.body.data.id}/redeliver`, { token: tenant.token });
    expect(again.status).toBe(202);
    const redelivered = await settled(tenant.token, queued.body.data.id, 'delivered');
    expect(redelivered.attempts).toHaveLength(9);
    expect(receiver.at('/always-500').at(-1)?.headers['webhook-id']).toBe(queued.body.data.webhookId);
    expectErrorEnvelope(await api('POST', `/tenant/deliveries/${queued.body.data.id}/redeliver`, { token: tenant.token }), 409);
  }, 60_000);

  test('a connection refused is retried and, after the last attempt, failed', async () => {
    const { tenant, alertId } = await alertingTenant('/refused');
    await api('PATCH', '/tenant/settings', {
      token: tenant.token,
      // The discard port: nothing listens there.
      body: { alertChannels: { webhook: { url: 'http://127.0.0.1:9/closed' } } },
    });
    const queued = await fire(tenant.token, alertId);
    // Eight attempts a second apart, each through the queue: seconds alone, but the full suite on two cores has
    // taken over 40 s (the twin's consumers share the machine with every other test file).
    const delivery = await settled(tenant.token, queued.body.data.id, 'failed', 75_000);
    expect(delivery.attempts).toHaveLength(8);
    expect(delivery.attempts[0].error).toMatch(/^connection_failed/);
  }, 90_000);

  test('a receiver slower than 10 seconds is a time-out, retried', async () => {
    const { tenant, alertId } = await alertingTenant('/slow');
    receiver.replyWith((request) => (request.path === '/slow' ? { status: 200, delayMs: 11_000 } : { status: 200 }));
    const queued = await fire(tenant.token, alertId);
    const retrying = await settled(tenant.token, queued.body.data.id, 'retrying', 20_000);
    expect(retrying.attempts[0].error).toMatch(/^timeout/);
    expect(retrying.nextAttemptAt).toEqual(expect.any(String));
    receiver.replyWith(() => ({ status: 200 }));
    const delivered = await settled(tenant.token, queued.body.data.id, 'delivered', 20_000);
    expect(delivered.attempts.at(-1).statusCode).toBe(200);
  }, 60_000);

  test('a receiver that answers 200 at once and sends its body slower than 10 seconds is delivered at once, not retried', async () => {
    const { tenant, alertId } = await alertingTenant('/trickle');
    // 15 seconds of body, a chunk every half second, after a status line sent at once.
    const body = Array.from({ length: 30 }, (_, index) => `part-${String(index).padStart(2, '0')}; `).join('');
    receiver.replyWith((request) =>
      request.path === '/trickle' ? { status: 200, body, trickle: { chunkLength: 9, everyMs: 500 } } : { status: 200 },
    );
    const queued = await fire(tenant.token, alertId);
    const delivered = await settled(tenant.token, queued.body.data.id, 'delivered');
    expect(delivered.attempts).toEqual([
      expect.objectContaining({ statusCode: 200, responseBody: expect.stringMatching(/^part-00; /) }),
    ]);
    expect(body.startsWith(delivered.attempts[0].responseBody)).toBe(true);
    expect(delivered.nextAttemptAt).toBeNull();
    await vi.waitFor(() => expect(receiver.at('/trickle')[0]?.bodyCut).toBe(true));
    expect(receiver.at('/trickle')).toHaveLength(1);
  }, 60_000);

  test('Retry-After longer than the schedule is honoured', async () => {
    const { tenant, alertId } = await alertingTenant('/busy');
    receiver.replyWith((request) =>
      request.path === '/busy' && receiver.at('/busy').length === 1
        ? { status: 503, headers: { 'retry-after': '4' } }
        : { status: 200 },
    );
    const queued = await fire(tenant.token, alertId);
    const delivered = await settled(tenant.token, queued.body.data.id, 'delivered', 20_000);
    const [first, second] = receiver.at('/busy');
    expect(delivered.attempts.map((attempt: { statusCode: number }) => attempt.statusCode)).toEqual([503, 200]);
    // The schedule says 1 second in tests; the receiver asked for 4.
    expect((second?.at ?? 0) - (first?.at ?? 0)).toBeGreaterThanOrEqual(3_900);
  }, 30_000);

  test('a redirect is a failure and is not followed', async () => {
    const { tenant, alertId } = await alertingTenant('/moved');
    receiver.replyWith((request) =>
      request.path === '/moved' ? { status: 302, headers: { location: receiver.url('/elsewhere') } } : { status: 200 },
    );
    const queued = await fire(tenant.token, alertId);
    const retrying = await settled(tenant.token, queued.body.data.id, 'retrying');
    expect(retrying.attempts[0].statusCode).toBe(302);
    expect(receiver.at('/elsewhere')).toEqual([]);
  });

  test('410 stops at once and disables the channel until the tenant re-enables it', async () => {
    const { tenant, alertId } = await alertingTenant('/gone', 410);
    const queued = await fire(tenant.token, alertId);
    const failed = await settled(tenant.token, queued.body.data.id, 'failed');
    expect(failed.attempts).toHaveLength(1);
    const settings = (await api('GET', '/tenant/settings', { token: tenant.token })).body.data.alertChannels.webhook;
    expect(settings).toMatchObject({ enabled: false, disabledReason: expect.stringMatching(/410/) });
    expect(expectErrorEnvelope(await fire(tenant.token, alertId), 409).code).toBe('channel_inactive');
    const enabled = await api('PATCH', '/tenant/settings', {
      token: tenant.token,
      body: { alertChannels: { webhook: { enabled: true } } },
    });
    expect(enabled.body.data.alertChannels.webhook).toEqual(expect.objectContaining({ enabled: true }));
    expect(enabled.body.data.alertChannels.webhook.disabledReason).toBeUndefined();
  });

  test('an inactive tenant or an alert without the webhook channel queues nothing: 409', async () => {
    const { client, tenant, alertId } = await alertingTenant('/off');
    await api('PATCH', `/tenant/alerts/${alertId}`, { token: tenant.token, body: { channels: { webhook: false } } });
    expect(expectErrorEnvelope(await fire(tenant.token, alertId), 409).code).toBe('channel_inactive');
    await api('PATCH', `/tenant/alerts/${alertId}`, { token: tenant.token, body: { channels: { webhook: true } } });
    await api('POST', `/tenants/${tenant.id}/deactivate`, { token: client.token });
    expect(expectErrorEnvelope(await fire(tenant.token, alertId), 409).code).toBe('tenant_inactive');
    expect((await api('GET', `/tenant/alerts/${alertId}/deliveries`, { token: tenant.token })).body.data).toEqual([]);
    await new Promise((resolve) => setTimeout(resolve, 1000));
    expect(receiver.at('/off')).toEqual([]);
  });

  test('a request over the body bound is refused (413); the largest it takes is delivered, through the payload bucket, under 4 MB', async () => {
    const { tenant, alertId } = await alertingTenant('/large');
    const withText = (length: number) => ({
      user: { id: 1 },
      content: [{ type: 'text', nome: 'Big', generated: { text: 'x'.repeat(length) } }],
    });
    // The text that makes the request exactly maxBodyBytes.
    const largest = maxBodyBytes - Buffer.byteLength(JSON.stringify(withText(0)));
    const over = await api('POST', `/tenant/alerts/${alertId}/fire`, { token: tenant.token, body: withText(largest + 1) });
    expect(expectErrorEnvelope(over, 413).code).toBe('payload_too_large');
    const queued = await api('POST', `/tenant/alerts/${alertId}/send`, { token: tenant.token, body: withText(largest) });
    expect(queued.status).toBe(202);
    const delivery = await settled(tenant.token, queued.body.data.id, 'delivered');
    expect(delivery.trigger).toBe('send');
    expect(delivery.bytes).toBeGreaterThan(largest);
    // The request bound keeps every webhook body within the spec's 4 MB.
    expect(delivery.bytes).toBeLessThanOrEqual(maxWebhookBodyBytes);
    const request = receiver.at('/large').find((entry) => entry.headers['webhook-id'] === queued.body.data.webhookId);
    expect(Buffer.byteLength(request?.body ?? '')).toBe(delivery.bytes);
    expect(validatePayload(JSON.parse(request?.body ?? '{}'))).toBe(true);
    // It went through the bucket (too large for a queue message), and left it once delivered.
    const record = await findDelivery(tenantOwner(tenant.id), queued.body.data.id);
    expect(record?.payloadKey).toBe(`deliveries/${tenant.id}/${queued.body.data.id}.json`);
    expect(await getPayload(record?.payloadKey ?? '')).toBeUndefined();
  }, 60_000);
});

describe('review fixes', () => {
  test("alert content too large for the alert's item is a 400 at /content before anything is written", async () => {
    const { tenant, alertId } = await alertingTenant('/too-large');
    const withText = (length: number) => [{ type: 'text', nome: 'Big', generated: { text: 'x'.repeat(length) } }];
    // Under the 1 MiB request limit, over DynamoDB's 400 KB item limit.
    const created = await api('POST', '/tenant/alerts', {
      token: tenant.token,
      body: { nome: 'Huge', channels: { webhook: true }, content: withText(450_000) },
    });
    expect(expectErrorEnvelope(created, 400).errors).toEqual([
      expect.objectContaining({ location: 'body', pointer: '/content' }),
    ]);
    const changed = await api('PATCH', `/tenant/alerts/${alertId}`, {
      token: tenant.token,
      body: { content: withText(450_000) },
    });
    expect(expectErrorEnvelope(changed, 400).errors[0].pointer).toBe('/content');
    const alerts = (await api('GET', '/tenant/alerts', { token: tenant.token })).body.data;
    expect(alerts.map((alert: { id: number; content: unknown }) => [alert.id, alert.content])).toEqual([
      [alertId, [{ type: 'text', nome: 'Intro', generated: { text: 'Hi' } }]],
    ]);
    // Large content that fits is kept.
    const fits = await api('POST', '/tenant/alerts', {
      token: tenant.token,
      body: { nome: 'Large', channels: { webhook: true }, content: withText(290_000) },
    });
    expect(fits.status).toBe(201);
  });

  test('a body small in UTF-8 but large once escaped for the queue goes through the payload bucket', async () => {
    const { tenant, alertId, secret } = await alertingTenant('/escaped-large');
    // 140 KB of UTF-8, 6 bytes a character in the queue message: over the 384 KiB a message may carry.
    const text = 'ã'.repeat(70_000);
    const queued = await fire(tenant.token, alertId, {
      user: { id: 1 },
      content: [{ type: 'text', nome: 'T', generated: { text } }],
    });
    expect(queued.status).toBe(202);
    const delivery = await settled(tenant.token, queued.body.data.id, 'delivered');
    const record = await findDelivery(tenantOwner(tenant.id), queued.body.data.id);
    expect(record?.payloadKey).toBe(`deliveries/${tenant.id}/${queued.body.data.id}.json`);
    const request = receiver.at('/escaped-large').find((entry) => entry.headers['webhook-id'] === queued.body.data.webhookId);
    expect(Buffer.byteLength(request?.body ?? '')).toBe(delivery.bytes);
    const body = new Webhook(secret).verify(request?.body ?? '', request?.headers as Record<string, string>);
    expect((body as { content: { generated: { text: string } }[] }).content[0]?.generated.text).toBe(text);
  });

  test('a PATCH is one conditional update (no read, no retry loop); a missing alert is 404', async () => {
    const { tenant, alertId } = await alertingTenant('/one-write');
    const send = vi.spyOn(db(), 'send');
    try {
      const changed = await updateAlert(tenant.id, alertId, { nome: 'Renamed' });
      expect(send.mock.calls.map(([command]) => command.constructor.name)).toEqual(['UpdateCommand']);
      expect(changed).toMatchObject({
        id: alertId,
        nome: 'Renamed',
        channels: { webhook: true },
        content: [{ type: 'text', nome: 'Intro', generated: { text: 'Hi' } }],
      });
    } finally {
      send.mockRestore();
    }
    // Concurrent changes of different fields both stay.
    await Promise.all([
      api('PATCH', `/tenant/alerts/${alertId}`, { token: tenant.token, body: { nome: 'Both' } }),
      api('PATCH', `/tenant/alerts/${alertId}`, { token: tenant.token, body: { channels: { webhook: false } } }),
    ]);
    expect((await api('GET', `/tenant/alerts/${alertId}`, { token: tenant.token })).body.data).toMatchObject({
      nome: 'Both',
      channels: { webhook: false },
    });
    expect((await api('DELETE', `/tenant/alerts/${alertId}`, { token: tenant.token })).status).toBe(200);
    const gone = await api('PATCH', `/tenant/alerts/${alertId}`, { token: tenant.token, body: { nome: 'Back' } });
    expectErrorEnvelope(gone, 404);
    // Nothing was recreated.
    expectErrorEnvelope(await api('GET', `/tenant/alerts/${alertId}`, { token: tenant.token }), 404);
  });

  test('after three rotations the signature carries two entries: the newest secret and the one it replaced', async () => {
    const { tenant, alertId, secret: first } = await alertingTenant('/rotated');
    const secrets = [first];
    for (let rotation = 0; rotation < 3; rotation++) {
      const rotated = await api('POST', '/tenant/settings/webhook/secret', { token: tenant.token });
      secrets.push(rotated.body.data.alertChannels.webhook.signingSecret);
    }
    const queued = await fire(tenant.token, alertId);
    await settled(tenant.token, queued.body.data.id, 'delivered');
    const [request] = receiver.at('/rotated') as [Received];
    const signature = String(request.headers['webhook-signature']);
    expect(signature.split(' ').filter((entry) => entry.startsWith('v1,'))).toHaveLength(2);
    const headers = request.headers as Record<string, string>;
    for (const secret of secrets.slice(-2))
      expect(new Webhook(secret).verify(request.body, headers)).toEqual(JSON.parse(request.body));
    for (const secret of secrets.slice(0, 2)) expect(() => new Webhook(secret).verify(request.body, headers)).toThrow();
  });

  test('an alert named with an emoji and content with accents is delivered exactly, signature valid', async () => {
    const { tenant, alertId, secret } = await alertingTenant('/unicode');
    await api('PATCH', `/tenant/alerts/${alertId}`, { token: tenant.token, body: { nome: '🚨 Vendas do mês' } });
    const content = [
      { type: 'text', nome: 'Relatório', generated: { text: 'Ação necessária 🚨: São Paulo, Zürich, 東京, naïve café' } },
    ];
    const queued = await fire(tenant.token, alertId, { user: { id: 'usuário-1', email: 'joão@acme.com' }, content });
    expect(queued.status).toBe(202);
    await settled(tenant.token, queued.body.data.id, 'delivered');
    const [request] = receiver.at('/unicode') as [Received];
    const body = JSON.parse(request.body);
    expect(body).toEqual({
      alert: { nome: '🚨 Vendas do mês', id: alertId },
      user: { id: 'usuário-1', email: 'joão@acme.com' },
      content,
      timestamp: expect.any(String),
    });
    expect(new Webhook(secret).verify(request.body, request.headers as Record<string, string>)).toEqual(body);
  });

  test("a deleted alert's deliveries stay listable by its tenant only", async () => {
    const { tenant, alertId } = await alertingTenant('/deleted');
    const queued = await fire(tenant.token, alertId);
    await settled(tenant.token, queued.body.data.id, 'delivered');
    expect((await api('DELETE', `/tenant/alerts/${alertId}`, { token: tenant.token })).status).toBe(200);
    const log = await api('GET', `/tenant/alerts/${alertId}/deliveries`, { token: tenant.token });
    expect(log.status).toBe(200);
    expect(log.body.data.map((entry: { id: number }) => entry.id)).toEqual([queued.body.data.id]);
    expect((await deliveryOf(tenant.token, queued.body.data.id)).body.data.status).toBe('delivered');
    const stranger = await newTenant((await newClient()).token);
    expectErrorEnvelope(await api('GET', `/tenant/alerts/${alertId}/deliveries`, { token: stranger.token }), 404);
  });

  test('redeliver is refused (409 channel_inactive) while the channel is disabled or missing', async () => {
    const { tenant, alertId } = await alertingTenant('/gone-then-back', 410);
    const queued = await fire(tenant.token, alertId);
    await settled(tenant.token, queued.body.data.id, 'failed');
    const redeliver = () => api('POST', `/tenant/deliveries/${queued.body.data.id}/redeliver`, { token: tenant.token });
    const disabled = expectErrorEnvelope(await redeliver(), 409);
    expect(disabled.code).toBe('channel_inactive');
    expect(disabled.message).toMatch(/disabled.*410/);
    expect((await deliveryOf(tenant.token, queued.body.data.id)).body.data.status).toBe('failed');

    const webhook = (await api('GET', '/tenant/settings', { token: tenant.token })).body.data.alertChannels.webhook;
    await api('PATCH', '/tenant/settings', { token: tenant.token, body: { alertChannels: { webhook: null } } });
    expect(expectErrorEnvelope(await redeliver(), 409).message).toMatch(/No webhook URL/);

    receiver.replyWith(() => ({ status: 200 }));
    await api('PATCH', '/tenant/settings', { token: tenant.token, body: { alertChannels: { webhook: { url: webhook.url } } } });
    expect((await redeliver()).status).toBe(202);
    await settled(tenant.token, queued.body.data.id, 'delivered');
  });
});

describe("the tenant's deliveries, across its alerts", () => {
  test('GET /tenant/deliveries lists every alert’s, newest first, by status and paged; each attempt keeps 1 KB of the answer', async () => {
    // A 410 fails a delivery at its first attempt (and disables the channel, enabled again below). Its answer: 5 KB
    // of 3-byte characters after two ASCII ones, so the 1,024th byte falls inside a character.
    const answer = `ab${'€'.repeat(1700)}`;
    expect(Buffer.byteLength(answer)).toBeGreaterThan(5000);
    const { tenant, alertId } = await alertingTenant('/ops-views');
    receiver.replyWith((request) => (request.path === '/ops-views' ? { status: 410, body: answer } : { status: 200 }));
    const failed = (await fire(tenant.token, alertId)).body.data.id as number;
    const attempt = (await settled(tenant.token, failed, 'failed')).attempts[0];
    expect(attempt.statusCode).toBe(410);
    // The whole characters of the first 1,024 bytes: 2 + 340 × 3 = 1,022 bytes, as text.
    expect(attempt.responseBody).toBe(`ab${'€'.repeat(340)}`);
    expect(Buffer.byteLength(attempt.responseBody)).toBe(1022);

    receiver.replyWith(() => ({ status: 200 }));
    await api('PATCH', '/tenant/settings', { token: tenant.token, body: { alertChannels: { webhook: { enabled: true } } } });
    const other = await api('POST', '/tenant/alerts', {
      token: tenant.token,
      body: { nome: 'Other', channels: { webhook: true }, content: [{ type: 'text', nome: 'Intro', generated: { text: 'Hi' } }] },
    });
    const sent = (await api('POST', `/tenant/alerts/${alertId}/send`, { token: tenant.token, body: { user: { id: 2 } } })).body
      .data.id as number;
    const fired = (await fire(tenant.token, other.body.data.id)).body.data.id as number;
    await settled(tenant.token, sent, 'delivered');
    await settled(tenant.token, fired, 'delivered');

    const list = async (query = '') => (await api('GET', `/tenant/deliveries${query}`, { token: tenant.token })).body;
    const all = await list();
    expect(all.data.map((delivery: { id: number; alertId: number }) => [delivery.id, delivery.alertId])).toEqual([
      [fired, other.body.data.id],
      [sent, alertId],
      [failed, alertId],
    ]);
    expect(all.nextCursor).toBeNull();
    expect((await list('?status=failed')).data).toEqual([all.data[2]]);
    expect((await list('?status=queued')).data).toEqual([]);
    // Pages of one with a filter, walked by nextCursor: each delivered one once, newest first.
    const first = await list('?status=delivered&limit=1');
    expect(first.data.map((delivery: { id: number }) => delivery.id)).toEqual([fired]);
    const second = await list(`?status=delivered&limit=1&cursor=${encodeURIComponent(first.nextCursor)}`);
    expect(second.data.map((delivery: { id: number }) => delivery.id)).toEqual([sent]);
    expect(second.nextCursor).toBeNull();

    const refused = expectErrorEnvelope(await api('GET', '/tenant/deliveries?status=lost', { token: tenant.token }), 400);
    expect(refused.code).toBe('invalid_query_parameter');
    expect(refused.errors.map((error: { pointer: string }) => error.pointer)).toEqual(['/status']);
    // Another tenant sees none of them, and reads none of them.
    const stranger = await newTenant((await newClient()).token);
    expect((await api('GET', '/tenant/deliveries?status=failed', { token: stranger.token })).body.data).toEqual([]);
    expect((await api('GET', '/tenant/deliveries', { token: stranger.token })).body.data).toEqual([]);
    expectErrorEnvelope(await deliveryOf(stranger.token, failed), 404);
  });
});

describe('Idempotency-Key: one key is one request, path included', () => {
  test("the key of one alert's send, sent to another alert, is 409 idempotency_key_reused: never the first alert's answer", async () => {
    const { tenant, alertId } = await alertingTenant('/keys');
    const other = await api('POST', '/tenant/alerts', {
      token: tenant.token,
      body: { nome: 'Other', channels: { webhook: true }, content: [{ type: 'text', nome: 'Intro', generated: { text: 'Hi' } }] },
    });
    const headers = { 'idempotency-key': crypto.randomUUID() };
    const body = { user: { id: 7 } };
    for (const action of ['send', 'fire']) {
      const first = await api('POST', `/tenant/alerts/${alertId}/${action}`, {
        token: tenant.token,
        body,
        headers: { ...headers, 'idempotency-key': `${action}-${headers['idempotency-key']}` },
      });
      expect(first.status).toBe(202);
      const elsewhere = await api('POST', `/tenant/alerts/${other.body.data.id}/${action}`, {
        token: tenant.token,
        body,
        headers: { 'idempotency-key': `${action}-${headers['idempotency-key']}` },
      });
      expect(expectErrorEnvelope(elsewhere, 409).code).toBe('idempotency_key_reused');
    }
    expect((await api('GET', `/tenant/alerts/${other.body.data.id}/deliveries`, { token: tenant.token })).body.data).toEqual([]);
  });
});
