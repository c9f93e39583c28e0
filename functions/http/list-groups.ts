import { httpHandler } from '#functions/core/api/http-handler.ts';
import { unpagedAnswer } from '#functions/core/api/whole-list.ts';
import { tenantIdOf } from '#functions/core/auth/principals.ts';
import { describeGroups } from '#functions/core/directory/groups.ts';

/** GET /tenant/groups: every group with its member ids (the group and membership quotas keep it within one answer). */
export const handler = httpHandler(async ({ principal }) => ({
  status: 200,
  body: unpagedAnswer(await describeGroups(tenantIdOf(principal)), 'The list of groups'),
}));
