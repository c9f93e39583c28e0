import { UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { db, queryAll, tableName, writeIf, writeItem } from '#functions/core/store/dynamo.ts';
import { ownerFields, ownerId, ownerKeys, ownerName, type WebhookOwner } from '#functions/core/webhooks/owner.ts';

// An owner's webhook endpoint (a tenant's, or a client's): its circuit breaker and its attempt slots (alerts/endpoint.ts says
// how they are used). Both are leases or counters that a crashed holder leaves to expire.

/** The breaker, present only while the endpoint's attempts stall (time out, or fail to connect). */
export interface BreakerRecord {
  /** Whose endpoint it is: one of the two. */
  tenantId?: number;
  clientId?: number;
  /** The URL the stalls were on: a new URL starts with a closed breaker. */
  url: string;
  /** Stalls in a row since the endpoint last answered. */
  stalls: number;
  /** Set while the breaker is open: no attempt before this instant (ms), then one probe. */
  openUntil?: number;
  /** When it opened first in this run of stalls (ms): a pause of days disables the channel. */
  openedAt?: number;
  /** How many times it opened in this run of stalls: each pause is twice the one before. */
  opens?: number;
  /** The probe in flight, if any: its holder and until when it holds it (ms). */
  probeId?: string;
  probeUntil?: number;
}

/** One attempt slot: held by the attempt whose claim it carries until `claimedUntil` (ms), free after it. */
export interface SlotRecord {
  slot: number;
  claimId?: string;
  claimedUntil: number;
}

export interface EndpointState {
  breaker?: BreakerRecord;
  slots: SlotRecord[];
}

/** Breaker and slot items go after 30 days without a write (an owner whose endpoint went quiet). */
const retentionSeconds = 30 * 86_400;
const expiresAt = (now: number) => Math.floor(now / 1000) + retentionSeconds;

/** The breaker and the slots of the owner's endpoint: one consistent Query of a few items. */
export async function findEndpointState(owner: WebhookOwner): Promise<EndpointState> {
  const keys = ownerKeys(owner);
  const items = await queryAll<Record<string, unknown>>(keys.endpointItems.partition, keys.endpointItems.prefix);
  const breaker = items.find((item) => item.sk === keys.endpoint.sk) as BreakerRecord | undefined;
  const slots = items.filter((item) => item.sk !== keys.endpoint.sk) as unknown as SlotRecord[];
  return { ...(breaker ? { breaker } : {}), slots };
}

/** Takes slot `slot` for an attempt until `claimedUntil`, if it is free at `now` (never held, released, or its lease over). */
export function claimSlot(owner: WebhookOwner, slot: number, claimId: string, claimedUntil: number, now: number) {
  return writeItem({
    Put: {
      TableName: tableName(),
      Item: { ...ownerKeys(owner).slot(slot), ...ownerFields(owner), slot, claimId, claimedUntil, expiresAt: expiresAt(now) },
      ConditionExpression: 'attribute_not_exists(pk) OR claimedUntil <= :now',
      ExpressionAttributeValues: { ':now': now },
    },
  });
}

/** Frees the slot if this attempt still holds it (a lease that ran out may have been taken over). */
export function releaseSlot(owner: WebhookOwner, slot: number, claimId: string) {
  return writeItem({
    Update: {
      TableName: tableName(),
      Key: ownerKeys(owner).slot(slot),
      UpdateExpression: 'SET claimedUntil = :free REMOVE claimId',
      ConditionExpression: 'claimId = :claimId',
      ExpressionAttributeValues: { ':free': 0, ':claimId': claimId },
    },
  });
}

/**
 * Counts one more stall on `url` and answers the breaker as it is now. A breaker kept for another
 * URL (the owner changed it since) is started over for this one.
 */
export async function countStall(owner: WebhookOwner, url: string, now: number): Promise<BreakerRecord> {
  // The breaker names its owner (`tenantId` or `clientId`), as a put of it does.
  const owned = {
    set: '#owner = :owner',
    names: { '#owner': owner.kind === 'tenant' ? 'tenantId' : 'clientId' },
    values: { ':owner': ownerId(owner) },
  };
  for (let attempt = 0; attempt < 3; attempt++) {
    let counted: BreakerRecord | undefined;
    const written = await writeIf(async () => {
      const result = await db().send(
        new UpdateCommand({
          TableName: tableName(),
          Key: ownerKeys(owner).endpoint,
          UpdateExpression: `SET ${owned.set}, #url = :url, expiresAt = :expiresAt ADD stalls :one`,
          ConditionExpression: 'attribute_not_exists(pk) OR #url = :url',
          ExpressionAttributeNames: { '#url': 'url', ...owned.names },
          ExpressionAttributeValues: { ':url': url, ':expiresAt': expiresAt(now), ':one': 1, ...owned.values },
          ReturnValues: 'ALL_NEW',
        }),
      );
      counted = result.Attributes as BreakerRecord;
    });
    if (written && counted) return counted;
    // Another URL's breaker: replaced by a fresh one for this URL (unless a racer did it first), then counted.
    await writeItem({
      Put: {
        TableName: tableName(),
        Item: { ...ownerKeys(owner).endpoint, ...ownerFields(owner), url, stalls: 0, expiresAt: expiresAt(now) },
        ConditionExpression: '#url <> :url',
        ExpressionAttributeNames: { '#url': 'url' },
        ExpressionAttributeValues: { ':url': url },
      },
    });
  }
  throw new Error(`The webhook breaker of ${ownerName(owner)} kept changing URL`);
}

/**
 * Opens the breaker on `url` until `openUntil`, if it is closed and has at least `threshold` stalls:
 * of the attempts that stall together, exactly one opens it. Answers whether this one did.
 */
export function openBreaker(owner: WebhookOwner, url: string, threshold: number, openUntil: number, now: number) {
  return writeItem({
    Update: {
      TableName: tableName(),
      Key: ownerKeys(owner).endpoint,
      UpdateExpression:
        'SET openUntil = :openUntil, openedAt = if_not_exists(openedAt, :now), opens = if_not_exists(opens, :zero) + :one',
      ConditionExpression: '#url = :url AND attribute_not_exists(openUntil) AND stalls >= :threshold',
      ExpressionAttributeNames: { '#url': 'url' },
      ExpressionAttributeValues: {
        ':url': url,
        ':threshold': threshold,
        ':openUntil': openUntil,
        ':now': now,
        ':zero': 0,
        ':one': 1,
      },
    },
  });
}

/** Makes this attempt the probe of the open breaker on `url`, if its pause is over and no live probe holds it. */
export function claimProbe(owner: WebhookOwner, url: string, probeId: string, probeUntil: number, now: number) {
  return writeItem({
    Update: {
      TableName: tableName(),
      Key: ownerKeys(owner).endpoint,
      UpdateExpression: 'SET probeId = :probeId, probeUntil = :probeUntil',
      ConditionExpression: '#url = :url AND openUntil <= :now AND (attribute_not_exists(probeUntil) OR probeUntil <= :now)',
      ExpressionAttributeNames: { '#url': 'url' },
      ExpressionAttributeValues: { ':url': url, ':probeId': probeId, ':probeUntil': probeUntil, ':now': now },
    },
  });
}

/** The probe stalled: the breaker pauses again until `openUntil`. Answers it as it is now, or undefined if the probe was not this one's. */
export async function reopenBreaker(owner: WebhookOwner, probeId: string, openUntil: number): Promise<BreakerRecord | undefined> {
  let reopened: BreakerRecord | undefined;
  await writeIf(async () => {
    const result = await db().send(
      new UpdateCommand({
        TableName: tableName(),
        Key: ownerKeys(owner).endpoint,
        UpdateExpression: 'SET openUntil = :openUntil ADD opens :one, stalls :one REMOVE probeId, probeUntil',
        ConditionExpression: 'probeId = :probeId',
        ExpressionAttributeValues: { ':probeId': probeId, ':openUntil': openUntil, ':one': 1 },
        ReturnValues: 'ALL_NEW',
      }),
    );
    reopened = result.Attributes as BreakerRecord;
  });
  return reopened;
}

/** The endpoint answered: its breaker on `url` goes (closed, no stalls). Another URL's is left alone. */
export function closeBreaker(owner: WebhookOwner, url: string) {
  return writeItem({
    Delete: {
      TableName: tableName(),
      Key: ownerKeys(owner).endpoint,
      ConditionExpression: '#url = :url',
      ExpressionAttributeNames: { '#url': 'url' },
      ExpressionAttributeValues: { ':url': url },
    },
  });
}
