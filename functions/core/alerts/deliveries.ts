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
  allocateDeliveryId,
  type Attempt,
  deleteDeliveryBody,
  type DeliveryRecord,
  type DeliveryStatus,
  findDelivery,
  findDeliveryBody,
  findSettings,
  insertDelivery,
  listAlertDeliveriesPage,
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

/** The queue message: which delivery, and its body when small enough to travel along. */
export interface DeliveryMessage {
  tenantId: number;
  deliveryId: number;
  body?: string;
}

export const deliveryNotFound = () => notFound('Delivery not found', 'delivery_not_found');

export function describeDelivery(record: DeliveryRecord) {
  return {
    id: record.deliveryId,
    alertId: record.alertId,
    webhookId: record.webhookId,
    trigger: record.trigger,
    status: record.status,
    bytes: record.bytes,
    createdAt: record.createdAt,
    attempts: record.attempts,
    nextAttemptAt: record.nextAttemptAt ?? null,
    // While its endpoint is paused: the next attempt waits for it (attempts are not used up meanwhile).
    ...(record.heldSince ? { heldSince: record.heldSince, heldReason: record.heldReason } : {}),
    ...(record.failureReason ? { failureReason: record.failureReason } : {}),
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
 * sweeper.
 */
export async function queueDelivery(
  tenantId: number,
  alertId: number,
  request: AlertDeliveryBody,
  trigger: DeliveryRecord['trigger'],
  resumable: Resumable<DeliveryQueued> = unrecorded(),
): Promise<DeliveryQueued> {
  const [tenant, alert, settings] = await Promise.all([
    findTenant(tenantId),
    findAlert(tenantId, alertId),
    findSettings(tenantId),
  ]);
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
  const deliveryId = await allocateDeliveryId(tenantId);
  const now = new Date();
  const expiresAt = expiresAfterRetention('deliveryRetentionDays', now.getTime());
  // Sized as sent: escaping may make the message several times larger than the body.
  const inline = Buffer.byteLength(messageText({ tenantId, deliveryId, body })) <= inlineMessageBytes;
  const payloadKey = inline ? undefined : `deliveries/${tenantId}/${deliveryId}.json`;
  if (payloadKey) await putPayload(payloadKey, body);
  const record: DeliveryRecord = {
    tenantId,
    deliveryId,
    alertId,
    webhookId: `msg_${randomUUID().replaceAll('-', '')}`,
    trigger,
    status: 'queued',
    bytes,
    ...(payloadKey ? { payloadKey } : {}),
    attempts: [],
    roundStart: 0,
    createdAt: now.toISOString(),
    expiresAt,
  };
  const queued: DeliveryQueued = { id: deliveryId, webhookId: record.webhookId, status: record.status };
  await insertDelivery(record, inline ? body : undefined, [recordFollowUp(sending(record)), ...resumable.finish(queued)]);
  await enqueue(record, inline ? body : undefined);
  return queued;
}

/** The queue message's text, exactly as sent. */
export const messageText = (message: DeliveryMessage) => messageBody(message);

/** The follow-up that puts a queued delivery on the queue. */
const sending = (record: Pick<DeliveryRecord, 'tenantId' | 'deliveryId'>) => ({
  kind: 'enqueue-delivery' as const,
  ownerId: record.tenantId,
  subjectId: record.deliveryId,
});

/**
 * Puts a queued delivery on the queue (with its body when it travels along), then drops the
 * follow-up that asked for it. A failure to send is left to the follow-up sweeper, which sends it
 * again: the delivery is queued, it is only late.
 */
async function enqueue(record: DeliveryRecord, body: string | undefined): Promise<void> {
  const message: DeliveryMessage = { tenantId: record.tenantId, deliveryId: record.deliveryId, ...(body ? { body } : {}) };
  try {
    await sendMessage('webhook', { tenantId: record.tenantId, body: message });
    await deleteFollowUp(sending(record));
  } catch (error) {
    logger.error('A queued delivery could not be sent to the queue; the follow-up sweeper will', {
      tenantId: record.tenantId,
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
export async function sendQueuedDelivery(tenantId: number, deliveryId: number): Promise<void> {
  const record = await findDelivery(tenantId, deliveryId);
  if (record?.status === 'queued') {
    await sendMessage('webhook', { tenantId, body: { tenantId, deliveryId } satisfies DeliveryMessage });
  }
  await deleteFollowUp(sending({ tenantId, deliveryId }));
}

export async function getDelivery(tenantId: number, deliveryId: number) {
  const record = await findDelivery(tenantId, deliveryId);
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

/** The body of a delivery: from its item, or from the payload bucket (undefined once expired). */
export async function deliveryBody(record: DeliveryRecord): Promise<string | undefined> {
  if (record.payloadKey) return getPayload(record.payloadKey);
  return findDeliveryBody(record.tenantId, record.deliveryId);
}

/** POST /tenant/deliveries/{id}/redeliver: a failed delivery gets a new round of attempts, same webhook-id. */
export async function redeliver(tenantId: number, deliveryId: number) {
  const record = await findDelivery(tenantId, deliveryId);
  if (!record) throw deliveryNotFound();
  if (record.status !== 'failed')
    throw conflict(`Only a failed delivery can be redelivered; this one is ${record.status}`, 'delivery_not_failed');
  const problem = channelProblem(await findSettings(tenantId));
  if (problem) throw conflict(`${problem}: enable it before redelivering`, 'channel_inactive');
  const body = await deliveryBody(record);
  if (body === undefined) throw conflict('The payload of this delivery has expired', 'payload_expired');
  const requeued = await requeueDelivery(tenantId, deliveryId, record.attempts.length, [recordFollowUp(sending(record))]);
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
export async function dropDeliveredBody(record: Pick<DeliveryRecord, 'tenantId' | 'deliveryId' | 'payloadKey'>) {
  if (record.payloadKey) await deletePayload(record.payloadKey);
  else await deleteDeliveryBody(record.tenantId, record.deliveryId);
}
