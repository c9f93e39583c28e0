import { enumQueryParameter, httpHandler, pageParameters, pageResponse } from '#functions/core/api/http-handler.ts';
import { tenantIdOf } from '#functions/core/auth/principals.ts';
import { listDeliveries } from '#functions/core/alerts/deliveries.ts';
import type { DeliveryStatus } from '#functions/core/alerts/alert-repository.ts';
import { tenantOwner } from '#functions/core/webhooks/owner.ts';

export const handler = httpHandler(async (request) => {
  const { limit, cursor } = pageParameters(request);
  const status = enumQueryParameter<DeliveryStatus>(request, 'status');
  return pageResponse(await listDeliveries(tenantOwner(tenantIdOf(request.principal)), status, limit, cursor));
});
