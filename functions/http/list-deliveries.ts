import { httpHandler, idParameter, pageParameters, pageResponse } from '#functions/core/api/http-handler.ts';
import { tenantIdOf } from '#functions/core/auth/principals.ts';
import { listAlertDeliveries } from '#functions/core/alerts/deliveries.ts';

export const handler = httpHandler(async (request) => {
  const { limit, cursor } = pageParameters(request);
  const page = await listAlertDeliveries(tenantIdOf(request.principal), idParameter(request, 'id'), limit, cursor);
  return pageResponse(page);
});
