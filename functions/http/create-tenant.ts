import { httpHandler } from '#functions/core/api/http-handler.ts';
import createTenantSchema from '#functions/core/api/validators/create-tenant.cjs';
import { clientIdOf } from '#functions/core/auth/principals.ts';
import { createTenant, type TenantCreated } from '#functions/core/tenants/tenants.ts';

const created = (tenant: TenantCreated) => ({ status: 201, body: { status: 'success', data: tenant } });

export const handler = httpHandler(
  async ({ principal, body, deadline, idempotency }) =>
    created(await createTenant(clientIdOf(principal), body, deadline, idempotency.resumable(created))),
  { body: createTenantSchema },
);
