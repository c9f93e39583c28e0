import { httpHandler, idParameter } from '../core/api/http-handler.ts';
import { tenantIdOf } from '../core/auth/principals.ts';
import { deleteAlert } from '../core/alerts/alerts.ts';

export const handler = httpHandler(async (request) => {
  await deleteAlert(tenantIdOf(request.principal), idParameter(request, 'id'));
  return { status: 200, body: { status: 'success', data: true } };
});
