import { httpHandler, idParameter } from '#functions/core/api/http-handler.ts';
import alertDeliverySchema from '#functions/core/api/validators/alert-delivery.cjs';
import { tenantIdOf } from '#functions/core/auth/principals.ts';
import type { AlertDeliveryRecord } from './alert-repository.ts';
import { type DeliveryQueued, queueDelivery } from './deliveries.ts';

const queued = (delivery: DeliveryQueued) => ({ status: 202, body: { status: 'success', data: delivery } });

/** The handler of POST /tenant/alerts/{id}/fire and /send: the same delivery, queued with its trigger; 202. */
export const deliveryHandler = (trigger: AlertDeliveryRecord['trigger']) =>
  httpHandler(
    async (request) =>
      queued(
        await queueDelivery(
          tenantIdOf(request.principal),
          idParameter(request, 'id'),
          request.body,
          trigger,
          request.requestId,
          request.idempotency.resumable(queued),
        ),
      ),
    { body: alertDeliverySchema },
  );
