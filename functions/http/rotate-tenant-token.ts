import { httpHandler, idParameter } from '#functions/core/api/http-handler.ts';
import { clientIdOf } from '#functions/core/auth/principals.ts';
import { rotateTenantToken } from '#functions/core/tenants/tenants.ts';

export const handler = httpHandler(async (request) => ({
  status: 200,
  body: { status: 'success', data: await rotateTenantToken(clientIdOf(request.principal), idParameter(request, 'id')) },
}));
