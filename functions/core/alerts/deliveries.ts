import { randomUUID } from 'node:crypto';
import type { AlertDeliveryBody } from '#functions/core/api/validators/alert-delivery.cjs';
import { dynamoItemBytes, sqsMessageBytes } from '#functions/core/aws-limits.ts';
import { conflict, notFound, payloadTooLarge } from '#functions/core/errors.ts';
import { deleteFollowUp, recordFollowUp } from '#functions/core/follow-ups/follow-up-repository.ts';
import { logger } from '#functions/core/observability/logger.ts';
import { deletePayload, getPayload, putPayload } from '#functions/core/store/payloads.ts';
import { messageBody, sendMessage } from '#functions/core/store/queues.ts';
import { type Resumable, unrecorded } from '#functions/core/store/resumable.ts';
import { findTenant, tenantInactive, tenantNotFound } from '#functions/core/tenants/tenant-repository.ts';
import {
  type OwnerFields,
  ownerFields,
  ownerKeys,
  ownerOf,
  tenantOwner,
  type WebhookOwner,
} from '#functions/core/webhooks/owner.ts';
import {
  allocateDeliveryIds,
  type AlertDeliveryRecord,
  type Attempt,
  deleteDeliveryBody,
  type DeliveryRecord,
  deliveryOwner,
  type DeliveryStatus,
  findDelivery,
  findDeliveryBody,
  findSettings,
  insertDelivery,
  listAlertDeliveriesPage,
  listDeliveriesPage,
  requeueDelivery,
  updateDeliveryState,
} from './alert-repository.ts';
import { buildPayload, findAlert } from './alerts.ts';
import { channelProblem } from './settings.ts';
import { expiresAt as expiresAfterRetention } from '#functions/core/store/retention.ts';
import { mapPage } from '#functions/core/store/dynamo.ts';

/** Spec 8: a webhook body is at most 4 MB. */
export const maxWebhookBodyBytes = 4 * 1024 * 1024;
/**
 * A body travels in the queue message (and waits for a redelivery in an item) when the whole
 * message, as sent (ASCII-escaped, see `messageBody`), takes at most this many bytes; a larger one
 * goes to the payload bucket and the message carries the claim check. The message must fit SQS's
 * limit and the body (never more bytes than the message that carries it) DynamoDB's item limit,
 * with room for the item's keys: the smaller of the two, less 16 KiB.
 */
export const inlineMessageBytes = Math.min(sqsMessageBytes, dynamoItemBytes) - 16 * 1024;

/** The queue message: whose delivery (`tenantId` or `clientId`), which, and its body when small enough to travel along. */
export type DeliveryMessage = OwnerFields & {
  deliveryId: number;
  body?: string;
};

export const deliveryNotFound = () => notFound('Delivery not found', 'delivery_not_found');

/** A delivery as the API shows it: an alert's (with its alert and trigger) or an event's (with its type). */
export function describeDelivery(record: DeliveryRecord) {
  return {
    id: record.deliveryId,
    ...(record.tenantId === undefined ? { type: record.type } : { alertId: record.alertId, trigger: record.trigger }),
    webhookId: record.webhookId,
    status: record.status,
    bytes: record.bytes,
    createdAt: record.createdAt,
    attempts: record.attempts,
    nextAttemptAt: record.nextAttemptAt ?? null,
    // While its endpoint is paused: the next attempt waits for it (attempts are not used up meanwhile).
    ...(record.heldSince ? { heldSince: record.heldSince, heldReason: record.heldReason } : {}),
    ...(record.failureReason ? { failureReason: record.failureReason } : {}),
    ...(record.requestId === undefined ? {} : { requestId: record.requestId }),
  };
}

/** What a delivery would send, without sending it (POST …/preview). */
export async function previewDelivery(tenantId: number, alertId: number, request: AlertDeliveryBody) {
  const payload = buildPayload(await findAlert(tenantId, alertId), request.user, request.content);
  const bytes = Buffer.byteLength(JSON.stringify(payload));
  return { payload, bytes, withinLimit: bytes <= maxWebhookBodyBytes };
}

/** What queueing a delivery answers. */
export interface DeliveryQueued {
  id: number;
  webhookId: string;
  status: DeliveryStatus;
}

/**
 * Queues one delivery of an alert (fire from the platform, or a user's force-send). Refused with
 * nothing queued: an inactive tenant, an alert or tenant webhook channel that is off (409), a body
 * over 4 MB (413). The delivery, its body and the follow-up that sends it commit together (with the
 * request's answer): from then on it is sent, by this request or, if that stops, by the follow-up
 * sweeper. The delivery keeps `requestId`, the id of the request that queued it.
 */
export async function queueDelivery(
  tenantId: number,
  alertId: number,
  request: AlertDeliveryBody,
  trigger: AlertDeliveryRecord['trigger'],
  requestId: string | undefined,
  resumable: Resumable<DeliveryQueued> = unrecorded(),
): Promise<DeliveryQueued> {
  const owner = tenantOwner(tenantId);
  const [tenant, alert, settings] = await Promise.all([findTenant(tenantId), findAlert(tenantId, alertId), findSettings(owner)]);
  if (!tenant || tenant.deletedAt) throw tenantNotFound();
  if (!tenant.ativo) throw tenantInactive();
  if (!alert.channels.webhook) throw conflict("The alert's webhook channel is off", 'channel_inactive');
  const problem = channelProblem(settings);
  if (problem) throw conflict(problem, 'channel_inactive');
  const body = JSON.stringify(buildPayload(alert, request.user, request.content));
  const bytes = Buffer.byteLength(body);
  if (bytes > maxWebhookBodyBytes) {
    throw payloadTooLarge(`The webhook body would be ${bytes} bytes; at most ${maxWebhookBodyBytes} are sent`);
  }
  const [deliveryId] = (await allocateDeliveryIds(owner, 1)) as [number];
  const now = new Date();
  const inline = travelsInline(owner, deliveryId, body);
  const payloadKey = inline ? undefined : ownerKeys(owner).payloadKey(deliveryId);
  if (payloadKey) await putPayload(payloadKey, body);
  const record: AlertDeliveryRecord = {
    tenantId,
    alertId,
    trigger,
    ...newDeliveryState(deliveryId, bytes, now, requestId),
    ...(payloadKey ? { payloadKey } : {}),
  };
  const queued: DeliveryQueued = { id: deliveryId, webhookId: record.webhookId, status: record.status };
  await insertDelivery(record, inline ? body : undefined, [recordFollowUp(sending(record)), ...resumable.finish(queued)]);
  await enqueue(record, inline ? body : undefined);
  return queued;
}

/**
 * Whether a body travels in its queue message (and waits in an item for a redelivery), sized as
 * sent: escaping may make the message several times larger than the body.
 */
export const travelsInline = (owner: WebhookOwner, deliveryId: number, body: string) =>
  Buffer.byteLength(messageText({ ...ownerFields(owner), deliveryId, body })) <= inlineMessageBytes;

/**
 * What a new delivery starts with, whoever owns it: queued, no attempt, a fresh `webhook-id`, kept for the
 * retention, and the id of the request that made it, if one did. That id is only stored and shown: never
 * sent to the receiver (its headers are the signed Standard Webhooks ones), never a key.
 */
export function newDeliveryState(deliveryId: number, bytes: number, now: Date, requestId: string | undefined) {
  return {
    deliveryId,
    webhookId: `msg_${randomUUID().replaceAll('-', '')}`,
    status: 'queued' as const,
    bytes,
    attempts: [],
    roundStart: 0,
    ...(requestId === undefined ? {} : { requestId }),
    createdAt: now.toISOString(),
    expiresAt: expiresAfterRetention('deliveryRetentionDays', now.getTime()),
  };
}

/** The queue message's text, exactly as sent. */
export const messageText = (message: DeliveryMessage) => messageBody(message);

/**
 * The follow-up that puts a queued delivery on the queue: `enqueue-delivery` for a tenant's,
 * `enqueue-event` for a client's.
 */
export const sending = (record: OwnerFields & { deliveryId: number }) =>
  record.clientId === undefined
    ? { kind: 'enqueue-delivery' as const, ownerId: record.tenantId, subjectId: record.deliveryId }
    : { kind: 'enqueue-event' as const, ownerId: record.clientId, subjectId: record.deliveryId };

/** A delivery's message on the webhook queue, in its owner's message group (the fair queue). */
const sendDeliveryMessage = (message: DeliveryMessage) =>
  sendMessage('webhook', { ...ownerFields(ownerOf(message)), body: message });

/**
 * Puts a queued delivery on the queue (with its body when it travels along), then drops the
 * follow-up that asked for it. A failure to send is left to the follow-up sweeper, which sends it
 * again: the delivery is queued, it is only late.
 */
export async function enqueue(record: DeliveryRecord, body: string | undefined): Promise<void> {
  const owned = ownerFields(deliveryOwner(record));
  try {
    await sendDeliveryMessage({ ...owned, deliveryId: record.deliveryId, ...(body ? { body } : {}) });
    await deleteFollowUp(sending(record));
  } catch (error) {
    logger.error('A queued delivery could not be sent to the queue; the follow-up sweeper will', {
      ...owned,
      deliveryId: record.deliveryId,
      error: error as Error,
    });
  }
}

/**
 * The follow-up sweeper's part: a delivery still queued is sent (the deliverer reads its body from
 * the table or the bucket; a copy sent twice changes nothing the second time); one that moved on
 * was sent already.
 */
export async function sendQueuedDelivery(owner: WebhookOwner, deliveryId: number): Promise<void> {
  const record = await findDelivery(owner, deliveryId);
  const owned = ownerFields(owner);
  if (record?.status === 'queued') await sendDeliveryMessage({ ...owned, deliveryId });
  await deleteFollowUp(sending({ ...owned, deliveryId }));
}

export async function getDelivery(owner: WebhookOwner, deliveryId: number) {
  const record = await findDelivery(owner, deliveryId);
  if (!record) throw deliveryNotFound();
  return describeDelivery(record);
}

/**
 * The deliveries of one of the tenant's alerts, newest first. They stay readable after the alert is
 * deleted (until they expire); 404 only when there is neither the alert nor any delivery of it.
 */
export async function listAlertDeliveries(tenantId: number, alertId: number, limit: number, cursor: string | undefined) {
  const page = await listAlertDeliveriesPage(tenantId, alertId, limit, cursor);
  if (page.items.length === 0 && cursor === undefined) await findAlert(tenantId, alertId);
  return mapPage(page, describeDelivery);
}

/**
 * A page of all the owner's deliveries, newest first, only those of `status` when given (GET
 * /tenant/deliveries: of all the tenant's alerts, those of deleted alerts too; GET /tenants/deliveries:
 * the client's events).
 */
export async function listDeliveries(
  owner: WebhookOwner,
  status: DeliveryStatus | undefined,
  limit: number,
  cursor: string | undefined,
) {
  return mapPage(await listDeliveriesPage(owner, status, limit, cursor), describeDelivery);
}

/** The body of a delivery: from its item, or from the payload bucket (undefined once expired). */
export async function deliveryBody(record: DeliveryRecord): Promise<string | undefined> {
  if (record.payloadKey) return getPayload(record.payloadKey);
  return findDeliveryBody(deliveryOwner(record), record.deliveryId);
}

/**
 * POST /tenant/deliveries/{id}/redeliver (and /tenants/deliveries/{id}/redeliver): a failed
 * delivery gets a new round of attempts, same webhook-id.
 */
export async function redeliver(owner: WebhookOwner, deliveryId: number) {
  const record = await findDelivery(owner, deliveryId);
  if (!record) throw deliveryNotFound();
  if (record.status !== 'failed')
    throw conflict(`Only a failed delivery can be redelivered; this one is ${record.status}`, 'delivery_not_failed');
  const problem = channelProblem(await findSettings(owner));
  if (problem) throw conflict(`${problem}: enable it before redelivering`, 'channel_inactive');
  const body = await deliveryBody(record);
  if (body === undefined) throw conflict('The payload of this delivery has expired', 'payload_expired');
  const requeued = await requeueDelivery(owner, deliveryId, record.attempts.length, [recordFollowUp(sending(record))]);
  if (!requeued) throw conflict('The delivery was redelivered already', 'concurrent_change');
  const queued: DeliveryRecord = { ...record, status: 'queued', roundStart: record.attempts.length };
  await enqueue(queued, record.payloadKey ? undefined : body);
  return describeDelivery(queued);
}

/**
 * Records an attempt and the delivery's new state, if the delivery is still as `record` saw it: it
 * exists (one expired meanwhile is not recreated as a stub), has the same status and the same
 * attempts (a duplicate SQS copy that lost the race, e.g. against one that delivered, changes
 * nothing). Answers whether it was recorded. A delivered delivery's body is deleted at once (a
 * failed one keeps it, for a redelivery, until it expires).
 */
export async function finishDelivery(
  record: DeliveryRecord,
  status: DeliveryStatus,
  attempt: Attempt | undefined,
  reason?: string,
  nextAttemptAt?: string,
): Promise<boolean> {
  const recorded = await updateDeliveryState(record, status, attempt, reason, nextAttemptAt);
  if (!recorded || status !== 'delivered') return recorded;
  await dropDeliveredBody(record);
  return true;
}

/**
 * A delivered delivery's body is not needed any more: deleted (again, when a copy of the message
 * finds the delivery delivered already, in case the first deletion did not happen).
 */
export async function dropDeliveredBody(record: DeliveryRecord) {
  if (record.payloadKey) await deletePayload(record.payloadKey);
  else await deleteDeliveryBody(deliveryOwner(record), record.deliveryId);
}
