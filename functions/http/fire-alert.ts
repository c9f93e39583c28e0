import { httpHandler, idParameter } from '#functions/core/api/http-handler.ts';
import alertDeliverySchema from '#functions/core/api/validators/alert-delivery.cjs';
import { tenantIdOf } from '#functions/core/auth/principals.ts';
import { type DeliveryQueued, queueDelivery } from '#functions/core/alerts/deliveries.ts';

const queued = (delivery: DeliveryQueued) => ({ status: 202, body: { status: 'success', data: delivery } });

/** POST /tenant/alerts/{id}/fire (the platform fired the alert for a user): 202 with the queued delivery. */
export const handler = httpHandler(
  async (request) =>
    queued(
      await queueDelivery(
        tenantIdOf(request.principal),
        idParameter(request, 'id'),
        request.body,
        'fire',
        request.idempotency.resumable(queued),
      ),
    ),
  { body: alertDeliverySchema },
);
