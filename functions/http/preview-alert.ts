import { httpHandler, idParameter } from '#functions/core/api/http-handler.ts';
import alertDeliverySchema from '#functions/core/api/validators/alert-delivery.cjs';
import { tenantIdOf } from '#functions/core/auth/principals.ts';
import { previewDelivery } from '#functions/core/alerts/deliveries.ts';

/** `{payload, bytes, withinLimit}`: exactly what a delivery would POST now. Nothing is queued or sent. */
export const handler = httpHandler(
  async (request) => ({
    status: 200,
    body: {
      status: 'success',
      data: await previewDelivery(tenantIdOf(request.principal), idParameter(request, 'id'), request.body),
    },
  }),
  { body: alertDeliverySchema },
);
