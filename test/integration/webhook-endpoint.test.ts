/**
 * Per-endpoint limits and the circuit breaker over the real pieces: the twin's API, the webhook
 * queue (fauxqs, behind the twin's fair queue), the deliverer behind its concurrent poller, the
 * table, and a real HTTP receiver on loopback. Tests run with retries a second apart and a paused
 * endpoint probed after a second or two (test/support/global-setup.ts).
 */
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { disableAfterMs, stallsToOpen } from '#functions/core/alerts/endpoint.ts';
import { putAll } from '#functions/core/store/dynamo.ts';
import * as stored from '#functions/core/store/entity-declarations.ts';
import { api, newClient, newTenant } from '#test/support/api.ts';
import { eventually } from '#test/support/templates.ts';
import { startReceiver } from '#test/support/webhook-receiver.ts';

let receiver: Awaited<ReturnType<typeof startReceiver>>;
beforeAll(async () => {
  receiver = await startReceiver();
});
afterAll(() => receiver.close());

interface Attempt {
  at: string;
  url: string;
  statusCode?: number;
  error?: string;
}
interface Delivery {
  id: number;
  webhookId: string;
  status: string;
  attempts: Attempt[];
  nextAttemptAt: string | null;
  heldSince?: string;
  heldReason?: string;
  failureReason?: string;
}

/** A tenant whose webhook points at `path` on the receiver (with `webhook` settings besides), and an alert using it. */
async function alertingTenant(path: string, webhook: Record<string, unknown> = {}) {
  const tenant = await newTenant((await newClient()).token);
  const settings = await api('PATCH', '/tenant/settings', {
    token: tenant.token,
    body: { alertChannels: { webhook: { url: receiver.url(path), ...webhook } } },
  });
  expect(settings.status).toBe(200);
  const alert = await api('POST', '/tenant/alerts', {
    token: tenant.token,
    body: {
      nome: 'Stock low',
      channels: { webhook: true },
      content: [{ type: 'text', nome: 'Intro', generated: { text: 'Hi' } }],
    },
  });
  expect(alert.status).toBe(201);
  const fire = async () => {
    const queued = await api('POST', `/tenant/alerts/${alert.body.data.id}/fire`, {
      token: tenant.token,
      body: { user: { id: 7 } },
    });
    expect(queued.status).toBe(202);
    return queued.body.data.id as number;
  };
  const delivery = async (id: number): Promise<Delivery> =>
    (await api('GET', `/tenant/deliveries/${id}`, { token: tenant.token })).body.data;
  const endpoint = async () =>
    (await api('GET', '/tenant/settings', { token: tenant.token })).body.data.alertChannels.webhook as {
      enabled: boolean;
      disabledReason?: string;
      maxInFlight: number;
      endpoint: {
        state: string;
        stalls: number;
        inFlight: number;
        maxInFlight: number;
        pausedSince?: string;
        nextProbeAt?: string;
      };
    };
  return { tenant, fire, delivery, endpoint };
}

const allOf = <T>(items: Array<T | undefined>): T[] | undefined =>
  items.every((item) => item !== undefined) ? (items as T[]) : undefined;

describe('circuit breaker', () => {
  test('after 5 stalls in a row the endpoint pauses; its deliveries wait without using attempts; a probe resumes them, nothing lost', async () => {
    const path = '/breaker';
    receiver.replyWith((request) => (request.path === path ? { status: 200, drop: true } : { status: 200 }));
    const { fire, delivery, endpoint } = await alertingTenant(path);
    const ids: number[] = [];
    for (let index = 0; index < 6; index++) ids.push(await fire());

    // Paused: GET /tenant/settings says so, and a delivery's log says it waits for the endpoint.
    const paused = await eventually(async () => {
      const state = (await endpoint()).endpoint;
      return state.state === 'closed' ? undefined : state;
    }, 20_000);
    expect(paused.stalls).toBeGreaterThanOrEqual(stallsToOpen);
    expect(paused).toMatchObject({ pausedSince: expect.any(String), nextProbeAt: expect.any(String) });
    const held = await eventually(async () => {
      const deliveries = await Promise.all(ids.map(delivery));
      return deliveries.find((entry) => entry.heldSince !== undefined);
    }, 20_000);
    expect(held).toMatchObject({ heldReason: expect.stringMatching(/paused/), nextAttemptAt: expect.any(String) });
    expect(held.status).not.toBe('failed');

    // The receiver comes back: a probe finds it, the breaker closes, every delivery arrives.
    receiver.replyWith(() => ({ status: 200 }));
    const delivered = await eventually(
      async () =>
        allOf(await Promise.all(ids.map(async (id) => ((await delivery(id)).status === 'delivered' ? delivery(id) : undefined)))),
      40_000,
    );
    expect((await endpoint()).endpoint).toMatchObject({ state: 'closed', stalls: 0 });
    for (const entry of delivered) {
      // Holds are not attempts: no delivery used up its retries, and the hold is cleared.
      expect(entry.attempts.length).toBeLessThanOrEqual(8);
      expect(entry.attempts.at(-1)).toMatchObject({ statusCode: 200, url: receiver.url(path) });
      expect(entry.heldSince).toBeUndefined();
    }
    // Every recorded attempt is a request the receiver saw (a copy of a message SQS handed out twice
    // may make one more, which its delivery does not count), and each delivery got its answer.
    const requests = receiver.at(path);
    expect(delivered.reduce((sum, entry) => sum + entry.attempts.length, 0)).toBeLessThanOrEqual(requests.length);
    const answeredIds = new Set(
      requests.filter((request) => request.answeredAt !== undefined).map((request) => request.headers['webhook-id']),
    );
    for (const entry of delivered) expect(answeredIds.has(entry.webhookId)).toBe(true);
  }, 90_000);

  test('an endpoint paused for days whose probe stalls again disables the channel; its deliveries fail and can be redelivered', async () => {
    const path = '/gone-for-days';
    receiver.replyWith((request) => (request.path === path ? { status: 200, drop: true } : { status: 200 }));
    const { tenant, fire, delivery, endpoint } = await alertingTenant(path);
    // As the breaker would be after days of stalled probes: paused since long ago, its pause over now.
    const longAgo = Date.now() - disableAfterMs - 3_600_000;
    await putAll([
      {
        ...stored.webhookEndpoint.key({ tenantId: tenant.id }),
        tenantId: tenant.id,
        url: receiver.url(path),
        stalls: 40,
        opens: 30,
        openedAt: longAgo,
        openUntil: Date.now() - 1_000,
        expiresAt: Math.floor(Date.now() / 1000) + 86_400,
      },
    ]);
    const id = await fire();
    const failed = await eventually(async () => {
      const entry = await delivery(id);
      return entry.status === 'failed' ? entry : undefined;
    }, 20_000);
    // The probe was its one attempt; the channel then refused the rest.
    expect(failed.attempts).toHaveLength(1);
    expect(failed.attempts[0]?.error).toMatch(/^connection_failed/);
    expect(failed.failureReason).toMatch(/disabled.*No answer for 3 days/);
    const settings = await endpoint();
    expect(settings).toMatchObject({ enabled: false, disabledReason: expect.stringMatching(/^No answer for 3 days/) });
    expect(settings.endpoint.state).toBe('closed');

    receiver.replyWith(() => ({ status: 200 }));
    await api('PATCH', '/tenant/settings', { token: tenant.token, body: { alertChannels: { webhook: { enabled: true } } } });
    expect((await api('POST', `/tenant/deliveries/${id}/redeliver`, { token: tenant.token })).status).toBe(202);
    await eventually(async () => ((await delivery(id)).status === 'delivered' ? true : undefined), 20_000);
  }, 60_000);
});

describe('attempts in flight per endpoint', () => {
  test('never more than maxInFlight at once; the excess waits its turn without an attempt', async () => {
    const path = '/one-at-a-time';
    receiver.replyWith((request) => (request.path === path ? { status: 200, delayMs: 1_500 } : { status: 200 }));
    const { fire, delivery, endpoint } = await alertingTenant(path, { maxInFlight: 1 });
    expect((await endpoint()).maxInFlight).toBe(1);
    const ids = [await fire(), await fire(), await fire()];
    const delivered = await eventually(
      async () =>
        allOf(await Promise.all(ids.map(async (id) => ((await delivery(id)).status === 'delivered' ? delivery(id) : undefined)))),
      60_000,
    );
    for (const entry of delivered) expect(entry.attempts).toHaveLength(1);
    // One request in flight at a time: each arrived after the one before was answered.
    const requests = [...receiver.at(path)].sort((a, b) => a.at - b.at);
    expect(requests).toHaveLength(3);
    for (const [index, request] of requests.entries()) {
      const before = requests[index - 1];
      if (before) expect(request.at).toBeGreaterThanOrEqual(before.answeredAt ?? Number.POSITIVE_INFINITY);
    }
  }, 90_000);

  test('a slot held by an attempt whose worker died frees itself when its lease ends', async () => {
    const path = '/after-a-crash';
    receiver.replyWith(() => ({ status: 200 }));
    const { tenant, fire, delivery } = await alertingTenant(path, { maxInFlight: 1 });
    // The only slot, as a worker that died mid-attempt left it: held for another second and a half.
    await putAll([
      {
        ...stored.webhookSlot.key({ tenantId: tenant.id, slot: 0 }),
        tenantId: tenant.id,
        slot: 0,
        claimId: 'dead-worker',
        claimedUntil: Date.now() + 1_500,
      },
    ]);
    const id = await fire();
    const delivered = await eventually(async () => {
      const entry = await delivery(id);
      return entry.status === 'delivered' ? entry : undefined;
    }, 30_000);
    expect(delivered.attempts).toHaveLength(1);
  }, 60_000);

  test('one receiver that hangs holds only its own batch: another tenant is delivered meanwhile', async () => {
    receiver.replyWith((request) => (request.path === '/hangs' ? { status: 200, delayMs: 12_000 } : { status: 200 }));
    const hanging = await alertingTenant('/hangs');
    const quiet = await alertingTenant('/quiet');
    const hangingId = await hanging.fire();
    await eventually(async () => (receiver.at('/hangs').length > 0 ? true : undefined));
    const quietId = await quiet.fire();
    await eventually(async () => ((await quiet.delivery(quietId)).status === 'delivered' ? true : undefined));
    // The hanging attempt is still out: the quiet tenant did not wait for it.
    expect(receiver.at('/hangs')[0]?.answeredAt).toBeUndefined();
    expect((await hanging.delivery(hangingId)).attempts).toEqual([]);
  }, 60_000);
});

test('each attempt records the URL it went to, which may change between attempts', async () => {
  // The first attempt to the old URL is held open until the settings change has landed, then fails:
  // its retry, whenever it runs, reads the new URL.
  let settingsChanged = () => {};
  const changed = new Promise<void>((resolve) => {
    settingsChanged = resolve;
  });
  receiver.replyWith((request) => (request.path === '/old' ? { status: 500, after: changed } : { status: 200 }));
  const { tenant, fire, delivery } = await alertingTenant('/old');
  const id = await fire();
  await eventually(async () => (receiver.at('/old').length > 0 ? true : undefined));
  const patched = await api('PATCH', '/tenant/settings', {
    token: tenant.token,
    body: { alertChannels: { webhook: { url: receiver.url('/new') } } },
  });
  expect(patched.status).toBe(200);
  settingsChanged();
  const delivered = await eventually(async () => {
    const entry = await delivery(id);
    return entry.status === 'delivered' ? entry : undefined;
  }, 45_000);
  expect(delivered.attempts.map((attempt) => [attempt.url, attempt.statusCode])).toEqual([
    [receiver.url('/old'), 500],
    [receiver.url('/new'), 200],
  ]);
}, 60_000);
