import { httpHandler, idParameter, pageParameters } from '#functions/core/api/http-handler.ts';
import { tenantIdOf } from '#functions/core/auth/principals.ts';
import { listAlertDeliveries } from '#functions/core/alerts/deliveries.ts';

export const handler = httpHandler(async (request) => {
  const { limit, cursor } = pageParameters(request);
  const page = await listAlertDeliveries(tenantIdOf(request.principal), idParameter(request, 'id'), limit, cursor);
  return { status: 200, body: { status: 'success', data: page.items, nextCursor: page.nextCursor } };
});
