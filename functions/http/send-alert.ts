import { deliveryHandler } from '#functions/core/alerts/delivery-handler.ts';

/** POST /tenant/alerts/{id}/send (a user's force-send): 202 with the queued delivery. */
export const handler = deliveryHandler('send');
