import { httpHandler, pageParameters } from '#functions/core/api/http-handler.ts';
import { tenantIdOf } from '#functions/core/auth/principals.ts';
import { listUsersWithAccess } from '#functions/core/directory/directory.ts';

/** Spec 4.10 GET /tenant/users: every user with their groups and effective permissions, paginated. */
export const handler = httpHandler(async (request) => {
  const { limit, cursor } = pageParameters(request);
  const page = await listUsersWithAccess(tenantIdOf(request.principal), limit, cursor);
  return { status: 200, body: { status: 'success', data: page.items, nextCursor: page.nextCursor } };
});
