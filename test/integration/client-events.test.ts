/**
 * clientEventWrites (functions/core/events/client-events.ts), the API the causes of the integrator's
 * events commit through, over the real pieces: what it adds to a transaction, that a change that does not
 * commit sends nothing, and that an event whose send never happened (the function stopped between the
 * commit and the send) is sent by the follow-up sweeper, to a real receiver through the twin's deliverer.
 */
import { randomUUID } from 'node:crypto';
import { PutCommand } from '@aws-sdk/lib-dynamodb';
import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { findDelivery } from '#functions/core/alerts/alert-repository.ts';
import { type ClientEvent, clientEventWrites } from '#functions/core/events/client-events.ts';
import { followUpShards, listFollowUps } from '#functions/core/follow-ups/follow-up-repository.ts';
import { finishFollowUps, followUpGraceMs } from '#functions/core/follow-ups/sweeper.ts';
import { db, tableName } from '#functions/core/store/dynamo.ts';
import * as stored from '#functions/core/store/entity-declarations.ts';
import { clientGroup, sqs } from '#functions/core/store/queues.ts';
import { expiresAt } from '#functions/core/store/retention.ts';
import { transaction } from '#functions/core/store/transaction.ts';
import { clientOwner } from '#functions/core/webhooks/owner.ts';
import { api, newClient } from '#test/support/api.ts';
import { eventually } from '#test/support/templates.ts';
import { startReceiver } from '#test/support/webhook-receiver.ts';

let receiver: Awaited<ReturnType<typeof startReceiver>>;
beforeAll(async () => {
  receiver = await startReceiver();
});
afterAll(() => receiver.close());

const event: ClientEvent = {
  type: 'tenant.apply_failed',
  data: { tenantId: 9, templateId: 2, version: 3, rolloutId: null, error: { code: 'apply_in_progress', message: 'busy' } },
};

/** A change of the client's (a check that its record exists, or does not), committed with `items`. */
const commitWith = (clientId: number, items: Awaited<ReturnType<typeof clientEventWrites>>['items'], exists = true) =>
  transaction<'client' | 'clientEvent'>()
    .add('client', {
      ConditionCheck: {
        TableName: tableName(),
        Key: stored.client.key({ clientId }),
        ConditionExpression: exists ? 'attribute_exists(pk)' : 'attribute_not_exists(pk)',
      },
    })
    .include(items)
    .commit();

/** A client whose events webhook is `path` on the receiver, and its signing secret. */
async function listening(path = `/events/${randomUUID()}`) {
  const client = await newClient();
  const set = await api('PATCH', '/tenants/settings', { token: client.token, body: { webhook: { url: receiver.url(path) } } });
  return { ...client, path, secret: set.body.data.webhook.signingSecret as string };
}

const deliveriesOf = async (token: string) => (await api('GET', '/tenants/deliveries', { token })).body.data;

async function followUpsOf(clientId: number) {
  const found = [];
  for (let shard = 0; shard < followUpShards; shard++) {
    const { items } = await listFollowUps(shard, 100, undefined);
    found.push(...items.filter((followUp) => followUp.kind === 'enqueue-event' && followUp.ownerId === clientId));
  }
  return found;
}

describe('clientEventWrites', () => {
  test('a client without an events webhook, or with it off, gets no items: nothing is kept, nothing sent', async () => {
    const client = await newClient();
    expect((await clientEventWrites(client.clientId, [event])).items).toEqual([]);
    await api('PATCH', '/tenants/settings', {
      token: client.token,
      body: { webhook: { url: receiver.url('/off'), enabled: false } },
    });
    const off = await clientEventWrites(client.clientId, [event]);
    expect(off.items).toEqual([]);
    await off.afterCommit();
    const listening = await api('PATCH', '/tenants/settings', { token: client.token, body: { webhook: { enabled: true } } });
    expect(listening.status).toBe(200);
    expect((await clientEventWrites(client.clientId, [])).items).toEqual([]);
    expect(await deliveriesOf(client.token)).toEqual([]);
  });

  test('committed with its change, each event is a queued delivery and its follow-up; afterCommit sends them', async () => {
    const client = await listening();
    const second: ClientEvent = { ...event, data: { ...event.data, tenantId: 10 } };
    const writes = await clientEventWrites(client.clientId, [event, second]);
    // A delivery, its body and the follow-up that queues it, per event, all named for the transaction.
    expect(writes.items).toHaveLength(6);
    expect(new Set(writes.items.map((item) => item.name))).toEqual(new Set(['clientEvent']));
    expect((await commitWith(client.clientId, writes.items)).written).toBe(true);
    // Sent in the client's message group of the fair webhook queue (one busy integrator is served after the quiet ones).
    const groups: unknown[] = [];
    sqs().middlewareStack.add(
      (next) => async (args) => {
        groups.push((args.input as { MessageGroupId?: string }).MessageGroupId);
        return next(args);
      },
      { step: 'initialize', name: 'groupProbe' },
    );
    try {
      await writes.afterCommit();
    } finally {
      sqs().middlewareStack.remove('groupProbe');
    }
    expect(groups).toEqual([clientGroup(client.clientId), clientGroup(client.clientId)]);
    await eventually(async () => (receiver.at(client.path).length === 2 ? true : undefined));
    const bodies = receiver.at(client.path).map((request) => {
      new Webhook(client.secret).verify(request.body, request.headers as Record<string, string>);
      return JSON.parse(request.body) as { type: string; timestamp: string; data: { tenantId: number } };
    });
    expect(bodies.map((body) => body.data.tenantId).sort((a, b) => a - b)).toEqual([9, 10]);
    // One timestamp for the events of one change.
    expect(new Set(bodies.map((body) => body.timestamp)).size).toBe(1);
    expect(await followUpsOf(client.clientId)).toEqual([]);
    // Kept as a tenant's deliveries are: they expire after deliveryRetentionDays, their bodies with them.
    for (const { id, createdAt } of await deliveriesOf(client.token)) {
      const record = await findDelivery(clientOwner(client.clientId), id);
      expect(record?.expiresAt).toBe(expiresAt('deliveryRetentionDays', Date.parse(createdAt)));
    }
  });

  test('a change that does not commit sends nothing', async () => {
    const client = await listening();
    const writes = await clientEventWrites(client.clientId, [event]);
    expect((await commitWith(client.clientId, writes.items, false)).written).toBe(false);
    expect(await deliveriesOf(client.token)).toEqual([]);
    expect(await followUpsOf(client.clientId)).toEqual([]);
  });

  test('a stop between the commit and the send: the follow-up sweeper sends it, once its grace period is over', async () => {
    const client = await listening();
    const writes = await clientEventWrites(client.clientId, [event]);
    expect((await commitWith(client.clientId, writes.items)).written).toBe(true);
    // No afterCommit: the function stopped here. The delivery is queued, and nothing was sent.
    const [queued] = await deliveriesOf(client.token);
    expect(queued).toMatchObject({ type: 'tenant.apply_failed', status: 'queued', attempts: [] });
    const [left] = await followUpsOf(client.clientId);
    expect(left).toMatchObject({ kind: 'enqueue-event', ownerId: client.clientId, subjectId: queued.id });
    await finishFollowUps(Date.now(), Date.now() + 30_000);
    expect(receiver.at(client.path)).toEqual([]);

    // Time passes: the follow-up is older than the grace period (other tests' fresh ones are not).
    const key = stored.followUp.key({
      shard: client.clientId % followUpShards,
      kind: 'enqueue-event',
      ownerId: client.clientId,
      subjectId: queued.id,
    });
    await db().send(
      new PutCommand({ TableName: tableName(), Item: { ...left, ...key, createdAt: Date.now() - followUpGraceMs - 1_000 } }),
    );
    await finishFollowUps(Date.now(), Date.now() + 30_000);
    await eventually(async () => (receiver.at(client.path).length === 1 ? true : undefined));
    const [request] = receiver.at(client.path);
    new Webhook(client.secret).verify(request?.body ?? '', (request?.headers ?? {}) as Record<string, string>);
    expect(request?.headers['webhook-id']).toBe(queued.webhookId);
    expect(JSON.parse(request?.body ?? '')).toMatchObject({ type: event.type, data: event.data });
    expect(await followUpsOf(client.clientId)).toEqual([]);
    const delivered = await eventually(async () => {
      const [one] = await deliveriesOf(client.token);
      return one?.status === 'delivered' ? one : undefined;
    });
    expect(delivered.attempts).toHaveLength(1);
  });
});
