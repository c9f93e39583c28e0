import { httpHandler, idParameter } from '#functions/core/api/http-handler.ts';
import { tenantIdOf } from '#functions/core/auth/principals.ts';
import { redeliver } from '#functions/core/alerts/deliveries.ts';

export const handler = httpHandler(async (request) => ({
  status: 202,
  body: { status: 'success', data: await redeliver(tenantIdOf(request.principal), idParameter(request, 'id')) },
}));
