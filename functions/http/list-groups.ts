import { httpHandler } from '#functions/core/api/http-handler.ts';
import { tenantIdOf } from '#functions/core/auth/principals.ts';
import { describeGroups } from '#functions/core/directory/groups.ts';

/** GET /tenant/groups: every group with its member ids (the group and membership quotas keep it within one answer). */
export const handler = httpHandler(async ({ principal }) => ({
  status: 200,
  body: { status: 'success', data: await describeGroups(tenantIdOf(principal)) },
}));
