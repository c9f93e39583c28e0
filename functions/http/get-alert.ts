import { httpHandler, idParameter } from '../core/api/http-handler.ts';
import { tenantIdOf } from '../core/auth/principals.ts';
import { describeAlert, findAlert } from '../core/alerts/alerts.ts';

export const handler = httpHandler(async (request) => ({
  status: 200,
  body: { status: 'success', data: describeAlert(await findAlert(tenantIdOf(request.principal), idParameter(request, 'id'))) },
}));
