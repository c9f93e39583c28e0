import { httpHandler, idParameter } from '#functions/core/api/http-handler.ts';
import { tenantIdOf } from '#functions/core/auth/principals.ts';
import { deleteAlert } from '#functions/core/alerts/alerts.ts';

export const handler = httpHandler(async (request) => {
  await deleteAlert(tenantIdOf(request.principal), idParameter(request, 'id'));
  return { status: 200, body: { status: 'success', data: true } };
});
