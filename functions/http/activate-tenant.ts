import { httpHandler, idParameter } from '#functions/core/api/http-handler.ts';
import { clientIdOf } from '#functions/core/auth/principals.ts';
import { setTenantActive } from '#functions/core/tenants/tenants.ts';

/** POST /tenants/{id}/activate: the tenant's token may act again (apply, reload, login, schedules). */
export const handler = httpHandler(async (request) => {
  const tenant = await setTenantActive(clientIdOf(request.principal), idParameter(request, 'id'), true, request.deadline);
  return { status: 200, body: { status: 'success', data: tenant } };
});
