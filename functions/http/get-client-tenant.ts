import { httpHandler, idParameter } from '#functions/core/api/http-handler.ts';
import { clientIdOf } from '#functions/core/auth/principals.ts';
import { describeClientTenant, findClientTenant, tenantEtag } from '#functions/core/tenants/tenants.ts';

/** GET /tenants/{id}: one of the client's tenants, with its ETag for If-Match on its changes. */
export const handler = httpHandler(async (request) => {
  const tenant = await findClientTenant(clientIdOf(request.principal), idParameter(request, 'id'));
  return { status: 200, body: { status: 'success', data: describeClientTenant(tenant) }, headers: { etag: tenantEtag(tenant) } };
});
