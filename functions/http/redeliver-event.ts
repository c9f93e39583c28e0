import { httpHandler, idParameter } from '#functions/core/api/http-handler.ts';
import { clientIdOf } from '#functions/core/auth/principals.ts';
import { redeliver } from '#functions/core/alerts/deliveries.ts';
import { clientOwner } from '#functions/core/webhooks/owner.ts';

export const handler = httpHandler(async (request) => ({
  status: 202,
  body: { status: 'success', data: await redeliver(clientOwner(clientIdOf(request.principal)), idParameter(request, 'id')) },
}));
