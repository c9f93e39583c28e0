import { httpHandler, idParameter } from '#functions/core/api/http-handler.ts';
import { tenantIdOf } from '#functions/core/auth/principals.ts';
import { redeliver } from '#functions/core/alerts/deliveries.ts';
import { tenantOwner } from '#functions/core/webhooks/owner.ts';

export const handler = httpHandler(async (request) => ({
  status: 202,
  body: { status: 'success', data: await redeliver(tenantOwner(tenantIdOf(request.principal)), idParameter(request, 'id')) },
}));
