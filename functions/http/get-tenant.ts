import { httpHandler } from '#functions/core/api/http-handler.ts';
import { tenantIdOf } from '#functions/core/auth/principals.ts';
import { describeOwnTenant } from '#functions/core/tenants/tenants.ts';

/** GET /tenant: the tenant with its applications, desks and flows. */
export const handler = httpHandler(async ({ principal }) => ({
  status: 200,
  body: { status: 'success', data: await describeOwnTenant(tenantIdOf(principal)) },
}));
