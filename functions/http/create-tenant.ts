import { httpHandler } from '../core/api/http-handler.ts';
import createTenantSchema from '../core/api/validators/create-tenant.cjs';
import { clientIdOf } from '../core/auth/principals.ts';
import { createTenant } from '../core/tenants/tenants.ts';

export const handler = httpHandler(
  async ({ principal, body }) => ({
    status: 201,
    body: { status: 'success', data: await createTenant(clientIdOf(principal), body) },
  }),
  { body: createTenantSchema },
);
