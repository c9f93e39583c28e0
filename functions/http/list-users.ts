import { httpHandler, wholeListParameters } from '#functions/core/api/http-handler.ts';
import { listAnswer } from '#functions/core/api/whole-list.ts';
import { tenantIdOf } from '#functions/core/auth/principals.ts';
import { listUsersWithAccess } from '#functions/core/directory/directory.ts';

/**
 * Spec 4.10 GET /tenant/users: every user with their groups and effective permissions, or a page with
 * `limit`; each user is built and measured in turn, and an answer too large for one result is a 400.
 */
export const handler = httpHandler(async (request) => {
  const { limit, cursor } = wholeListParameters(request);
  const page = await listUsersWithAccess(tenantIdOf(request.principal), limit, cursor);
  return { status: 200, body: listAnswer(page, limit, (user) => `user ${user.id}`) };
});
