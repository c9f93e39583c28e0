import type {
  RolloutFinished,
  RolloutPaused,
  RolloutWaveFinished,
  RunFailed,
  ScheduleMissed,
  TenantApplyFailed,
  WebhookEndpointDisabled,
} from '#functions/core/api/validators/client-event.cjs';
import {
  allocateDeliveryIds,
  deliveryWrites,
  type EventDeliveryRecord,
  findSettings,
} from '#functions/core/alerts/alert-repository.ts';
import { enqueue, newDeliveryState, sending, travelsInline } from '#functions/core/alerts/deliveries.ts';
import { channelProblem } from '#functions/core/alerts/settings.ts';
import { recordFollowUp } from '#functions/core/follow-ups/follow-up-repository.ts';
import type { NamedItem } from '#functions/core/store/transaction.ts';
import { clientOwner } from '#functions/core/webhooks/owner.ts';

// Events for the integrator: what happened to its fleet (rollouts, applies, runs, schedules, tenants'
// webhooks), POSTed to its client's own webhook (PATCH /tenants/settings) as a tenant's alerts are to
// the tenant's: the same deliveries, signatures, retries, endpoint limits and log (alerts/*, with
// the client as their owner). docs/events.md is the catalogue.

/** A body as sent: `{type, timestamp, data}` (schemas/client-event.schema.json, whose types these are). */
type EventBody =
  | RolloutWaveFinished
  | RolloutFinished
  | RolloutPaused
  | TenantApplyFailed
  | RunFailed
  | ScheduleMissed
  | WebhookEndpointDisabled;

/** An event as its cause states it: its type and data (the timestamp is when it is queued). */
type Unstamped<Body> = Body extends { type: infer Type; data: infer Data } ? { type: Type; data: Data } : never;

/** The events a client's webhook receives, discriminated by `type`. */
export type ClientEvent = Unstamped<EventBody>;

/** The name of the items an event adds to the transaction of the change that causes it (transaction.ts `AlongsideName`). */
export type ClientEventItem = NamedItem<'clientEvent'>;

export interface ClientEventWrites {
  items: ClientEventItem[];
  afterCommit: () => Promise<void>;
}

/** No event: nothing to commit, nothing to send. */
export const noEvents: ClientEventWrites = { items: [], afterCommit: async () => {} };

/**
 * The items to commit in the transaction that makes these events happen (none when the client has no enabled
 * webhook), and what to call once that transaction committed (best effort: puts them on the queue; anything it
 * could not send, the follow-up sweeper sends). Exactly once: committed with the change, never without it.
 *
 * Each event is a delivery of the client's (its record, its body and the follow-up that queues it: puts
 * of fresh ids, so no condition of theirs fails the transaction), the same `timestamp` for all of them.
 * A channel that is off keeps nothing: the events of that time are not sent later. The ids are taken
 * before the commit: a change that does not commit leaves a gap in them, nothing else. The deliveries keep
 * `requestId`, the id of the request whose change it is (none when a worker's change causes them).
 */
export async function clientEventWrites(
  clientId: number,
  events: readonly ClientEvent[],
  requestId?: string,
): Promise<ClientEventWrites> {
  if (events.length === 0) return noEvents;
  const owner = clientOwner(clientId);
  if (channelProblem(await findSettings(owner)) !== undefined) return noEvents;
  const ids = await allocateDeliveryIds(owner, events.length);
  const now = new Date();
  const queued = events.map((event, index) => {
    const deliveryId = ids[index] as number;
    const body = JSON.stringify({ type: event.type, timestamp: now.toISOString(), data: event.data });
    // An event is a few hundred bytes: it always travels in its message (no payload bucket to write first).
    if (!travelsInline(owner, deliveryId, body))
      throw new Error(`A ${event.type} event is too large to send: ${body.length} characters`);
    const record: EventDeliveryRecord = {
      clientId,
      type: event.type,
      ...newDeliveryState(deliveryId, Buffer.byteLength(body), now, requestId),
    };
    return { record, body };
  });
  const items = queued.flatMap(({ record, body }) => [
    ...deliveryWrites(record, body).map((item): ClientEventItem => ({ name: 'clientEvent', item })),
    { name: 'clientEvent' as const, item: recordFollowUp(sending(record), now.getTime()).item },
  ]);
  return {
    items,
    afterCommit: async () => {
      // enqueue logs a failure and leaves the delivery to the sweeper: nothing here throws for one.
      await Promise.all(queued.map(({ record, body }) => enqueue(record, body)));
    },
  };
}
