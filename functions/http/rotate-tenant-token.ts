import { httpHandler, idParameter } from '../core/api/http-handler.ts';
import { clientIdOf } from '../core/auth/principals.ts';
import { rotateTenantToken } from '../core/tenants/tenants.ts';

export const handler = httpHandler(async (request) => ({
  status: 200,
  body: { status: 'success', data: await rotateTenantToken(clientIdOf(request.principal), idParameter(request, 'id')) },
}));
