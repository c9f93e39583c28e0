import { httpHandler } from '#functions/core/api/http-handler.ts';
import createTenantSchema from '#functions/core/api/validators/create-tenant.cjs';
import { clientIdOf } from '#functions/core/auth/principals.ts';
import { createTenant } from '#functions/core/tenants/tenants.ts';

export const handler = httpHandler(
  async ({ principal, body }) => ({
    status: 201,
    body: { status: 'success', data: await createTenant(clientIdOf(principal), body) },
  }),
  { body: createTenantSchema },
);
