import { httpHandler } from '#functions/core/api/http-handler.ts';
import deleteTenantSchema from '#functions/core/api/validators/delete-tenant.cjs';
import { clientIdOf } from '#functions/core/auth/principals.ts';
import { deleteTenant } from '#functions/core/tenants/tenants.ts';

/** Serves both DELETE /tenants and POST /tenants/delete (spec 4.3): one code path. */
export const handler = httpHandler(
  async ({ principal, body, deadline }) => ({
    status: 200,
    // The deletion's mark on the tenant lasts until this invocation's time-out, never longer.
    body: { status: 'success', data: await deleteTenant(clientIdOf(principal), body.id, deadline) },
  }),
  { body: deleteTenantSchema },
);
