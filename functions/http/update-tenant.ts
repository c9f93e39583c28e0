import { httpHandler, idParameter, ifMatchHeader } from '#functions/core/api/http-handler.ts';
import updateTenantSchema from '#functions/core/api/validators/update-tenant.cjs';
import { clientIdOf } from '#functions/core/auth/principals.ts';
import { describeClientTenant, tenantEtag, updateTenant } from '#functions/core/tenants/tenants.ts';

/** PATCH /tenants/{id}: what the client sets of a tenant; answers the tenant as GET /tenants/{id} does, with its new ETag. */
export const handler = httpHandler(
  async (request) => {
    const tenant = await updateTenant(
      clientIdOf(request.principal),
      idParameter(request, 'id'),
      request.body,
      ifMatchHeader(request),
    );
    return {
      status: 200,
      body: { status: 'success', data: describeClientTenant(tenant) },
      headers: { etag: tenantEtag(tenant) },
    };
  },
  { body: updateTenantSchema },
);
