import { httpHandler, idParameter } from '#functions/core/api/http-handler.ts';
import { clientIdOf } from '#functions/core/auth/principals.ts';
import { getDelivery } from '#functions/core/alerts/deliveries.ts';
import { clientOwner } from '#functions/core/webhooks/owner.ts';

export const handler = httpHandler(async (request) => ({
  status: 200,
  body: { status: 'success', data: await getDelivery(clientOwner(clientIdOf(request.principal)), idParameter(request, 'id')) },
}));
