import { httpHandler, idParameter } from '../core/api/http-handler.ts';
import { clientIdOf } from '../core/auth/principals.ts';
import { setTenantActive } from '../core/tenants/tenants.ts';

/** Serves POST /tenants/{id}/activate and /deactivate; the route's path says which. */
export const handler = httpHandler(async (request) => {
  const ativo = request.route.path.endsWith('/activate');
  const tenant = await setTenantActive(clientIdOf(request.principal), idParameter(request, 'id'), ativo);
  return { status: 200, body: { status: 'success', data: tenant } };
});
