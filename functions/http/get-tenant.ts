import { httpHandler } from '#functions/core/api/http-handler.ts';
import { singleAnswer } from '#functions/core/api/whole-list.ts';
import { tenantIdOf } from '#functions/core/auth/principals.ts';
import { describeOwnTenant } from '#functions/core/tenants/tenants.ts';

/** GET /tenant: the tenant with its applications, desks and flows, checked against what one answer carries. */
export const handler = httpHandler(async ({ principal }) => ({
  status: 200,
  body: singleAnswer(await describeOwnTenant(tenantIdOf(principal)), 'The tenant'),
}));
