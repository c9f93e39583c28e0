import { httpHandler, idParameter } from '#functions/core/api/http-handler.ts';
import { tenantIdOf } from '#functions/core/auth/principals.ts';
import { removeMember } from '#functions/core/directory/groups.ts';

/** DELETE /tenant/groups/{id}/members/{userId}: idempotent, removing a non-member is fine. */
export const handler = httpHandler(async (request) => {
  const groupId = idParameter(request, 'id');
  const userId = idParameter(request, 'userId');
  await removeMember(tenantIdOf(request.principal), groupId, userId);
  return { status: 200, body: { status: 'success', data: { groupId, userId, member: false } } };
});
