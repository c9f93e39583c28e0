import { httpHandler, idParameter } from '../core/api/http-handler.ts';
import { tenantIdOf } from '../core/auth/principals.ts';
import { getDelivery } from '../core/alerts/deliveries.ts';

export const handler = httpHandler(async (request) => ({
  status: 200,
  body: { status: 'success', data: await getDelivery(tenantIdOf(request.principal), idParameter(request, 'id')) },
}));
