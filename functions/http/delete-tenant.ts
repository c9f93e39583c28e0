import { httpHandler } from '../core/api/http-handler.ts';
import deleteTenantSchema from '../core/api/validators/delete-tenant.cjs';
import { clientIdOf } from '../core/auth/principals.ts';
import { deleteTenant } from '../core/tenants/tenants.ts';

/** Serves both DELETE /tenants and POST /tenants/delete (spec 4.3): one code path. */
export const handler = httpHandler(
  async ({ principal, body }) => ({
    status: 200,
    body: { status: 'success', data: await deleteTenant(clientIdOf(principal), body.id) },
  }),
  { body: deleteTenantSchema },
);
