import { httpHandler } from '../core/api/http-handler.ts';
import { tenantIdOf } from '../core/auth/principals.ts';
import { describeOwnTenant } from '../core/tenants/tenants.ts';

export const handler = httpHandler(async ({ principal }) => ({
  status: 200,
  body: { status: 'success', data: await describeOwnTenant(tenantIdOf(principal)) },
}));
