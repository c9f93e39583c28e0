import { httpHandler, wholeListParameters } from '#functions/core/api/http-handler.ts';
import { listAnswer } from '#functions/core/api/whole-list.ts';
import { tenantIdOf } from '#functions/core/auth/principals.ts';
import { listGroupViews } from '#functions/core/directory/groups.ts';

/**
 * GET /tenant/groups: every group with its member ids (the group and membership quotas keep it within
 * one answer), or a page with `limit`.
 */
export const handler = httpHandler(async (request) => {
  const { limit, cursor } = wholeListParameters(request);
  const page = await listGroupViews(tenantIdOf(request.principal), limit, cursor);
  return { status: 200, body: listAnswer(page, limit, (group) => `group ${group.id}`) };
});
