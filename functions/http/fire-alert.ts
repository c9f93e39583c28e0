import { deliveryHandler } from '#functions/core/alerts/delivery-handler.ts';

/** POST /tenant/alerts/{id}/fire (the platform fired the alert for a user): 202 with the queued delivery. */
export const handler = deliveryHandler('fire');
