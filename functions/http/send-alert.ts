import { httpHandler, idParameter } from '#functions/core/api/http-handler.ts';
import alertDeliverySchema from '#functions/core/api/validators/alert-delivery.cjs';
import { tenantIdOf } from '#functions/core/auth/principals.ts';
import { queueDelivery } from '#functions/core/alerts/deliveries.ts';

/** POST /tenant/alerts/{id}/send (a user's force-send): 202 with the queued delivery. */
export const handler = httpHandler(
  async (request) => {
    const delivery = await queueDelivery(tenantIdOf(request.principal), idParameter(request, 'id'), request.body, 'send');
    return { status: 202, body: { status: 'success', data: delivery } };
  },
  { body: alertDeliverySchema },
);
