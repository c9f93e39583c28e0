import { httpHandler, idParameter } from '#functions/core/api/http-handler.ts';
import { clientIdOf } from '#functions/core/auth/principals.ts';
import { setTenantActive } from '#functions/core/tenants/tenants.ts';

/** POST /tenants/{id}/deactivate: the tenant's token still reads, but apply, reload, login and schedules refuse (409). */
export const handler = httpHandler(async (request) => {
  const tenant = await setTenantActive(clientIdOf(request.principal), idParameter(request, 'id'), false, request.deadline);
  return { status: 200, body: { status: 'success', data: tenant } };
});
