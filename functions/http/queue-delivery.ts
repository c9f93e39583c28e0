import { httpHandler, idParameter } from '../core/api/http-handler.ts';
import alertDeliverySchema from '../core/api/validators/alert-delivery.cjs';
import { tenantIdOf } from '../core/auth/principals.ts';
import { queueDelivery } from '../core/alerts/deliveries.ts';

/** Serves POST …/fire (the platform) and …/send (a user's force-send): 202 with the delivery's id. */
export const handler = httpHandler(
  async (request) => {
    const trigger = request.route.path.endsWith('/fire') ? 'fire' : 'send';
    const delivery = await queueDelivery(tenantIdOf(request.principal), idParameter(request, 'id'), request.body, trigger);
    return { status: 202, body: { status: 'success', data: delivery } };
  },
  { body: alertDeliverySchema },
);
