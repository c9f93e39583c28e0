import { httpHandler, idParameter, pageParameters } from '../core/api/http-handler.ts';
import { tenantIdOf } from '../core/auth/principals.ts';
import { listAlertDeliveries } from '../core/alerts/deliveries.ts';

export const handler = httpHandler(async (request) => {
  const { limit, cursor } = pageParameters(request);
  const page = await listAlertDeliveries(tenantIdOf(request.principal), idParameter(request, 'id'), limit, cursor);
  return { status: 200, body: { status: 'success', data: page.items, nextCursor: page.nextCursor } };
});
