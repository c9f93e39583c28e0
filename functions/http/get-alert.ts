import { httpHandler, idParameter } from '#functions/core/api/http-handler.ts';
import { tenantIdOf } from '#functions/core/auth/principals.ts';
import { describeAlert, findAlert } from '#functions/core/alerts/alerts.ts';

export const handler = httpHandler(async (request) => ({
  status: 200,
  body: { status: 'success', data: describeAlert(await findAlert(tenantIdOf(request.principal), idParameter(request, 'id'))) },
}));
