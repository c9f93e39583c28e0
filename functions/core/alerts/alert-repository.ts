import { DeleteCommand, GetCommand } from '@aws-sdk/lib-dynamodb';
import type { CreateAlertBody } from '#functions/core/api/validators/create-alert.cjs';
import type { UpdateAlertBody } from '#functions/core/api/validators/update-alert.cjs';
import { type CountKey, countedTransaction, readCount } from '#functions/core/store/counts.ts';
import {
  allocateIds,
  db,
  getItem,
  nextTenantId,
  type Page,
  queryFilteredPage,
  queryPage,
  tableName,
  type TransactItem,
  updateReturning,
  writeItem,
} from '#functions/core/store/dynamo.ts';
import * as stored from '#functions/core/store/entity-declarations.ts';
import { type Alongside, type AlongsideName, transaction } from '#functions/core/store/transaction.ts';
import {
  type OwnerFields,
  ownerFields,
  ownerKeys,
  ownerName,
  ownerOf,
  type WebhookOwner,
} from '#functions/core/webhooks/owner.ts';

// Alerts, and the webhook channels' items: the settings and the deliveries of a tenant's alerts and of
// a client's events (webhooks/owner.ts says where each owner's are).

export interface AlertRecord extends CreateAlertBody {
  tenantId: number;
  alertId: number;
  createdAt: string;
  updatedAt: string;
}

export function allocateAlertId(tenantId: number): Promise<number> {
  return nextTenantId(tenantId, 'alert');
}

/** How many alerts the tenant has (alerts.ts `maxAlertsPerTenant`): `COUNT#ALERTS` in its partition. */
const alertCount = (tenantId: number): CountKey => stored.tenantCount.key({ tenantId, name: 'ALERTS' });

/** A decrease is never refused: its count's quota does not matter. */
const noMaximum = Number.MAX_SAFE_INTEGER;

/** The tenant's alert count. */
export function findAlertCount(tenantId: number): Promise<number> {
  return readCount(alertCount(tenantId));
}

/**
 * Writes a new alert, with `alongside` (the request's answer), and one more on the tenant's alert
 * count, in one commit: `false` when the tenant has `max` alerts already (the count's condition,
 * whatever runs at the same time).
 */
export async function insertAlert(record: AlertRecord, alongside: Alongside, max: number): Promise<boolean> {
  const { tenantId } = record;
  const tx = transaction<'alert' | AlongsideName>()
    .add('alert', {
      Put: {
        TableName: tableName(),
        Item: { ...stored.alert.key(record), ...record },
        ConditionExpression: 'attribute_not_exists(pk)',
      },
    })
    .include(alongside);
  const outcome = await countedTransaction(alertCount(tenantId), { delta: 1, max }, tx);
  if (outcome.written) return true;
  if ('limit' in outcome) return false;
  throw new Error(`Alert ${record.alertId} of tenant ${tenantId} already exists`);
}

export async function findAlertRecord(tenantId: number, alertId: number): Promise<AlertRecord | undefined> {
  return getItem<AlertRecord>(stored.alert.key({ tenantId, alertId }));
}

export function listAlertsPage(tenantId: number, limit: number, cursor: string | undefined): Promise<Page<AlertRecord>> {
  return queryPage<AlertRecord>({
    partition: stored.alert.partition({ tenantId }),
    prefix: stored.alert.keyPrefix({}),
    limit,
    cursor,
  });
}

/** Replaces the fields given, in one conditional write; the alert as written, or `undefined` when it does not exist. */
export async function updateAlertFields(
  tenantId: number,
  alertId: number,
  change: UpdateAlertBody,
  updatedAt: string,
): Promise<AlertRecord | undefined> {
  const fields = (['nome', 'channels', 'content'] as const).filter((field) => change[field] !== undefined);
  const names: Record<string, string> = {};
  const values: Record<string, unknown> = { ':updatedAt': updatedAt };
  for (const field of fields) {
    names[`#${field}`] = field;
    values[`:${field}`] = change[field];
  }
  const { written, item } = await updateReturning<AlertRecord>({
    TableName: tableName(),
    Key: stored.alert.key({ tenantId, alertId }),
    UpdateExpression: `SET ${[...fields.map((field) => `#${field} = :${field}`), 'updatedAt = :updatedAt'].join(', ')}`,
    ConditionExpression: 'attribute_exists(pk)',
    ...(fields.length > 0 ? { ExpressionAttributeNames: names } : {}),
    ExpressionAttributeValues: values,
  });
  return written ? item : undefined;
}

/** Deletes the alert and takes it off the tenant's alert count, in one commit; `false` when there was no such alert. */
export async function deleteAlertRecord(tenantId: number, alertId: number): Promise<boolean> {
  const tx = transaction<'alert'>().add('alert', {
    Delete: { TableName: tableName(), Key: stored.alert.key({ tenantId, alertId }), ConditionExpression: 'attribute_exists(pk)' },
  });
  const outcome = await countedTransaction(alertCount(tenantId), { delta: -1, max: noMaximum }, tx);
  return outcome.written;
}

export interface SigningSecret {
  secret: string;
  createdAt: string;
  /** Set on rotation: the old secret keeps signing (next to the new one) until then. */
  retiresAt?: string;
}

export interface WebhookChannel {
  url: string;
  enabled: boolean;
  /** Attempts in flight at most to this endpoint (alerts/endpoint.ts has the default and bounds). */
  maxInFlight?: number;
  /** Why deliveries stopped (a 410 from the receiver), until the owner re-enables the channel. */
  disabledAt?: string;
  disabledReason?: string;
  /** Newest first. */
  secrets: SigningSecret[];
}

/** A tenant's settings (its alert channel) or a client's (its events channel): the same record. */
export type SettingsRecord = OwnerFields & {
  webhook?: WebhookChannel;
  updatedAt: string;
};

/** The owner's settings; an owner that never set any has none (and an empty `updatedAt`). */
export async function findSettings(owner: WebhookOwner): Promise<SettingsRecord> {
  return (await getItem<SettingsRecord>(ownerKeys(owner).settings)) ?? { ...ownerFields(owner), updatedAt: '' };
}

/** Writes the record if nobody changed it since `seen` was read; false otherwise. */
export function replaceSettings(owner: WebhookOwner, record: SettingsRecord, seen: SettingsRecord): Promise<boolean> {
  return writeItem({
    Put: {
      TableName: tableName(),
      Item: { ...ownerKeys(owner).settings, ...record },
      ConditionExpression: 'attribute_not_exists(pk) OR updatedAt = :seen',
      ExpressionAttributeValues: { ':seen': seen.updatedAt },
    },
  });
}

/**
 * Called by the deliverer on a 410, or after days without an answer: no more deliveries until the
 * owner re-enables the channel. Only the channel still enabled at `url`: a URL changed since, or a
 * channel disabled already, is left alone, and `false` says so; `alongside` (the integrator's event
 * that says so) commits with the change, never without it.
 */
export async function disableWebhook(
  owner: WebhookOwner,
  url: string,
  reason: string,
  now: string,
  alongside: Alongside = [],
): Promise<boolean> {
  const outcome = await transaction<'settings' | AlongsideName>()
    .add('settings', {
      Update: {
        TableName: tableName(),
        Key: ownerKeys(owner).settings,
        UpdateExpression:
          'SET webhook.enabled = :false, webhook.disabledAt = :now, webhook.disabledReason = :reason, updatedAt = :now',
        ConditionExpression: 'webhook.#url = :url AND webhook.enabled = :true',
        ExpressionAttributeNames: { '#url': 'url' },
        ExpressionAttributeValues: { ':false': false, ':true': true, ':now': now, ':reason': reason, ':url': url },
      },
    })
    .include(alongside)
    .commit();
  return outcome.written;
}

export type DeliveryStatus = 'queued' | 'retrying' | 'delivered' | 'failed';

export interface Attempt {
  at: string;
  /** Where the attempt went: the owner's webhook URL at that moment (it may change between attempts). */
  url?: string;
  durationMs: number;
  statusCode?: number;
  /**
   * With `statusCode`: the first bytes of the receiver's answer as text (deliverer.ts, at most 1,024
   * bytes); absent from attempts made before it was kept.
   */
  responseBody?: string;
  error?: string;
}

/** What every delivery has, whoever owns it. */
interface DeliveryState {
  deliveryId: number;
  /** Standard Webhooks `webhook-id`: the same for every attempt and redelivery, for receivers to dedupe. */
  webhookId: string;
  status: DeliveryStatus;
  bytes: number;
  /** Set when the body is in the payload bucket. */
  payloadKey?: string;
  attempts: Attempt[];
  /** Attempts made before the current round (a redelivery starts the retry schedule over). */
  roundStart: number;
  nextAttemptAt?: string;
  /**
   * Set while its endpoint's breaker holds it back (no attempt made or counted meanwhile): since
   * when, and why; cleared by its next attempt.
   */
  heldSince?: string;
  heldReason?: string;
  /**
   * Until when (epoch ms) one copy of the delivery's message is making an attempt: no other copy
   * posts meanwhile (claimAttempt). Cleared when the attempt is recorded; a worker that dies leaves it
   * to expire with its endpoint slot's lease.
   */
  attemptingUntil?: number;
  failureReason?: string;
  /**
   * The id of the request that made it (request-id.ts; a redelivery keeps it): absent when no request
   * did (an event of a worker's) and on deliveries written before it was kept.
   */
  requestId?: string;
  createdAt: string;
  expiresAt: number;
}

/** A delivery of a tenant's alert. */
export interface AlertDeliveryRecord extends DeliveryState {
  tenantId: number;
  clientId?: never;
  alertId: number;
  trigger: 'fire' | 'send';
}

/** A delivery of an integrator's event to its client's webhook (events/client-events.ts). */
export interface EventDeliveryRecord extends DeliveryState {
  clientId: number;
  tenantId?: never;
  /** The event's `type`. */
  type: string;
}

export type DeliveryRecord = AlertDeliveryRecord | EventDeliveryRecord;

/** Whose delivery it is. */
export const deliveryOwner = (record: DeliveryRecord): WebhookOwner => ownerOf(record as OwnerFields);

/** `count` new delivery ids of the owner, in one round trip. */
export function allocateDeliveryIds(owner: WebhookOwner, count: number): Promise<number[]> {
  return allocateIds(ownerKeys(owner).deliveryCounter, count);
}

/**
 * The items that write a new delivery and its body when it is kept in an item (`inlineBody`), for
 * the transaction that queues it. An alert's delivery is also indexed under its alert.
 */
export function deliveryWrites(record: DeliveryRecord, inlineBody: string | undefined): TransactItem[] {
  const keys = ownerKeys(deliveryOwner(record));
  const indexEntry = record.tenantId === undefined ? {} : stored.delivery.indexEntry(record);
  const delivery: TransactItem = {
    Put: {
      TableName: tableName(),
      Item: { ...keys.delivery(record.deliveryId), ...indexEntry, ...record },
      ConditionExpression: 'attribute_not_exists(pk)',
    },
  };
  if (inlineBody === undefined) return [delivery];
  const body: TransactItem = {
    Put: {
      TableName: tableName(),
      Item: { ...keys.deliveryBody(record.deliveryId), body: inlineBody, expiresAt: record.expiresAt },
    },
  };
  return [delivery, body];
}

/**
 * Writes a new delivery, its body when it is kept in an item (`inlineBody`), and `alongside` (the
 * follow-up that puts it on the queue, the request's answer), in one commit.
 */
export async function insertDelivery(
  record: DeliveryRecord,
  inlineBody: string | undefined,
  alongside: Alongside,
): Promise<void> {
  const { written } = await transaction<'delivery' | AlongsideName>()
    .add('delivery', ...deliveryWrites(record, inlineBody))
    .include(alongside)
    .commit();
  if (!written) throw new Error(`Delivery ${record.deliveryId} of ${ownerName(deliveryOwner(record))} already exists`);
}

export async function findDelivery(owner: WebhookOwner, deliveryId: number): Promise<DeliveryRecord | undefined> {
  return getItem<DeliveryRecord>(ownerKeys(owner).delivery(deliveryId));
}

/** A page of the deliveries of one alert, newest first. */
export function listAlertDeliveriesPage(
  tenantId: number,
  alertId: number,
  limit: number,
  cursor: string | undefined,
): Promise<Page<DeliveryRecord>> {
  return queryPage<DeliveryRecord>({
    index: 'gsi1',
    partition: stored.delivery.indexes.gsi1.partition({ tenantId, alertId }),
    limit,
    cursor,
    newestFirst: true,
  });
}

/**
 * A page of all the owner's deliveries (a tenant's: of all its alerts; a client's: its events),
 * newest first; only those of `status` when given (a filtered page: queryFilteredPage).
 */
export function listDeliveriesPage(
  owner: WebhookOwner,
  status: DeliveryStatus | undefined,
  limit: number,
  cursor: string | undefined,
): Promise<Page<DeliveryRecord>> {
  const list = { ...ownerKeys(owner).deliveries, limit, cursor, newestFirst: true };
  return status === undefined
    ? queryPage<DeliveryRecord>(list)
    : queryFilteredPage<DeliveryRecord>({ ...list, keep: (delivery) => delivery.status === status });
}

export async function findDeliveryBody(owner: WebhookOwner, deliveryId: number): Promise<string | undefined> {
  const result = await db().send(new GetCommand({ TableName: tableName(), Key: ownerKeys(owner).deliveryBody(deliveryId) }));
  return result.Item?.body as string | undefined;
}

export async function deleteDeliveryBody(owner: WebhookOwner, deliveryId: number): Promise<void> {
  await db().send(new DeleteCommand({ TableName: tableName(), Key: ownerKeys(owner).deliveryBody(deliveryId) }));
}

/**
 * Puts a failed delivery back to `queued`, its new round starting at attempt `roundStart`, with
 * `alongside` (the follow-up that puts it on the queue) in one commit; `false` when it is not failed.
 */
export async function requeueDelivery(
  owner: WebhookOwner,
  deliveryId: number,
  roundStart: number,
  alongside: Alongside,
): Promise<boolean> {
  const outcome = await transaction<'delivery' | AlongsideName>()
    .add('delivery', {
      Update: {
        TableName: tableName(),
        Key: ownerKeys(owner).delivery(deliveryId),
        UpdateExpression: 'SET #status = :queued, roundStart = :roundStart REMOVE failureReason, nextAttemptAt',
        ConditionExpression: '#status = :failed',
        ExpressionAttributeNames: { '#status': 'status' },
        ExpressionAttributeValues: { ':queued': 'queued', ':failed': 'failed', ':roundStart': roundStart },
      },
    })
    .include(alongside)
    .commit();
  return outcome.written;
}

/** The delivery's own key. */
const deliveryKey = (record: DeliveryRecord) => ownerKeys(deliveryOwner(record)).delivery(record.deliveryId);

/**
 * Appends an attempt (if any) and sets the delivery's new state, if the delivery still exists
 * with the status and the number of attempts `record` has; `false` otherwise.
 */
export function updateDeliveryState(
  record: DeliveryRecord,
  status: DeliveryStatus,
  attempt: Attempt | undefined,
  reason: string | undefined,
  nextAttemptAt: string | undefined,
): Promise<boolean> {
  const sets = ['#status = :status'];
  const values: Record<string, unknown> = {
    ':status': status,
    ':seenStatus': record.status,
    ':seenAttempts': record.attempts.length,
  };
  if (attempt) {
    sets.push('attempts = list_append(attempts, :attempt)');
    values[':attempt'] = [attempt];
  }
  if (reason) {
    sets.push('failureReason = :reason');
    values[':reason'] = reason;
  }
  if (nextAttemptAt) {
    sets.push('nextAttemptAt = :next');
    values[':next'] = nextAttemptAt;
  }
  return writeItem({
    Update: {
      TableName: tableName(),
      Key: deliveryKey(record),
      // An attempt ends any hold by the endpoint's breaker.
      UpdateExpression: `SET ${sets.join(', ')} REMOVE heldSince, heldReason, attemptingUntil${nextAttemptAt ? '' : ', nextAttemptAt'}`,
      ConditionExpression: 'attribute_exists(pk) AND #status = :seenStatus AND size(attempts) = :seenAttempts',
      ExpressionAttributeNames: { '#status': 'status' },
      ExpressionAttributeValues: values,
    },
  });
}

/**
 * Claims the delivery's next attempt for one copy of its message until `until` (epoch ms), if it
 * is still as `record` saw it and no other copy holds a claim that has not expired: SQS delivers a
 * message at least once, and an endpoint takes several attempts at once, so without it two copies
 * could both post. `false` when another copy attempts it now or moved it on.
 */
export function claimAttempt(record: DeliveryRecord, until: number, now: number): Promise<boolean> {
  return writeItem({
    Update: {
      TableName: tableName(),
      Key: deliveryKey(record),
      UpdateExpression: 'SET attemptingUntil = :until',
      ConditionExpression:
        'attribute_exists(pk) AND #status = :seenStatus AND size(attempts) = :seenAttempts AND ' +
        '(attribute_not_exists(attemptingUntil) OR attemptingUntil <= :now)',
      ExpressionAttributeNames: { '#status': 'status' },
      ExpressionAttributeValues: {
        ':until': until,
        ':now': now,
        ':seenStatus': record.status,
        ':seenAttempts': record.attempts.length,
      },
    },
  });
}

/** Lets this copy's claim (`until`, as claimed) go, if it still holds it. */
export async function releaseAttempt(record: DeliveryRecord, until: number): Promise<void> {
  await writeItem({
    Update: {
      TableName: tableName(),
      Key: deliveryKey(record),
      UpdateExpression: 'REMOVE attemptingUntil',
      ConditionExpression: 'attemptingUntil = :until',
      ExpressionAttributeValues: { ':until': until },
    },
  });
}

/**
 * Records that the endpoint's breaker holds the delivery back until `nextAttemptAt` (no attempt
 * made), if it is still as `record` saw it; `heldSince` stays from the first hold. `false` otherwise
 * (another copy of its message moved it on).
 */
export function holdDelivery(record: DeliveryRecord, nextAttemptAt: string, reason: string, now: string): Promise<boolean> {
  return writeItem({
    Update: {
      TableName: tableName(),
      Key: deliveryKey(record),
      UpdateExpression: 'SET nextAttemptAt = :next, heldReason = :reason, heldSince = if_not_exists(heldSince, :now)',
      ConditionExpression: 'attribute_exists(pk) AND #status = :seenStatus AND size(attempts) = :seenAttempts',
      ExpressionAttributeNames: { '#status': 'status' },
      ExpressionAttributeValues: {
        ':next': nextAttemptAt,
        ':reason': reason,
        ':now': now,
        ':seenStatus': record.status,
        ':seenAttempts': record.attempts.length,
      },
    },
  });
}
