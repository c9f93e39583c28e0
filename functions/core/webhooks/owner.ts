import * as stored from '#functions/core/store/entity-declarations.ts';

/**
 * Whose webhook channel: a tenant's (its alerts, tenant token) or a client's (the integrator's
 * events, client token: events/client-events.ts). Both are set, signed, sent, retried, paused and
 * logged by the same code (alerts/*): only where their items live, and whose message group their
 * messages take, differ.
 */
export type WebhookOwner = { kind: 'tenant'; tenantId: number } | { kind: 'client'; clientId: number };

/** The owner's id as its records and queue messages carry it: `tenantId`, or `clientId`. */
export type OwnerFields = { tenantId: number; clientId?: never } | { clientId: number; tenantId?: never };

export const tenantOwner = (tenantId: number): WebhookOwner => ({ kind: 'tenant', tenantId });
export const clientOwner = (clientId: number): WebhookOwner => ({ kind: 'client', clientId });

export const ownerFields = (owner: WebhookOwner): OwnerFields =>
  owner.kind === 'tenant' ? { tenantId: owner.tenantId } : { clientId: owner.clientId };

/** The owner of a record or a message, by the id it carries. */
export const ownerOf = (fields: OwnerFields): WebhookOwner =>
  fields.clientId === undefined ? tenantOwner(fields.tenantId) : clientOwner(fields.clientId);

/** The owner's id, whichever kind it is. */
export const ownerId = (owner: WebhookOwner) => (owner.kind === 'tenant' ? owner.tenantId : owner.clientId);

/** `tenant 7`, `client 3`: the owner as an error or a log names it. */
export const ownerName = (owner: WebhookOwner) => `${owner.kind} ${ownerId(owner)}`;

/** The keys of an owner's webhook items: the same sort keys in the tenant's or the client's partition. */
export interface OwnerKeys {
  settings: { pk: string; sk: string };
  delivery: (deliveryId: number) => { pk: string; sk: string };
  deliveryBody: (deliveryId: number) => { pk: string; sk: string };
  /** The breaker. */
  endpoint: { pk: string; sk: string };
  slot: (slot: number) => { pk: string; sk: string };
  /** The breaker and the slots, read with one Query. */
  endpointItems: { partition: string; prefix: string };
  /** The deliveries, for a list of them all (an alert's alone are listed through their index). */
  deliveries: { partition: string; prefix: string };
  deliveryCounter: { pk: string; sk: string };
  /** Where a body too large for an item goes in the payload bucket. */
  payloadKey: (deliveryId: number) => string;
}

export function ownerKeys(owner: WebhookOwner): OwnerKeys {
  if (owner.kind === 'tenant') {
    const { tenantId } = owner;
    return {
      settings: stored.tenantSettings.key({ tenantId }),
      delivery: (deliveryId) => stored.delivery.key({ tenantId, deliveryId }),
      deliveryBody: (deliveryId) => stored.deliveryBody.key({ tenantId, deliveryId }),
      endpoint: stored.webhookEndpoint.key({ tenantId }),
      slot: (slot) => stored.webhookSlot.key({ tenantId, slot }),
      endpointItems: {
        partition: stored.webhookEndpoint.partition({ tenantId }),
        prefix: stored.collections.webhookEndpoint.keyPrefix,
      },
      deliveries: { partition: stored.delivery.partition({ tenantId }), prefix: stored.delivery.keyPrefix({}) },
      deliveryCounter: stored.tenantIdCounter.key({ tenantId, name: 'delivery' }),
      payloadKey: (deliveryId) => `deliveries/${tenantId}/${deliveryId}.json`,
    };
  }
  const { clientId } = owner;
  return {
    settings: stored.clientSettings.key({ clientId }),
    delivery: (deliveryId) => stored.eventDelivery.key({ clientId, deliveryId }),
    deliveryBody: (deliveryId) => stored.eventDeliveryBody.key({ clientId, deliveryId }),
    endpoint: stored.clientWebhookEndpoint.key({ clientId }),
    slot: (slot) => stored.clientWebhookSlot.key({ clientId, slot }),
    endpointItems: {
      partition: stored.clientWebhookEndpoint.partition({ clientId }),
      prefix: stored.collections.clientWebhookEndpoint.keyPrefix,
    },
    deliveries: { partition: stored.eventDelivery.partition({ clientId }), prefix: stored.eventDelivery.keyPrefix({}) },
    deliveryCounter: stored.clientIdCounter.key({ clientId, name: 'delivery' }),
    payloadKey: (deliveryId) => `client-deliveries/${clientId}/${deliveryId}.json`,
  };
}
