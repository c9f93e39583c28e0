import { httpHandler, idParameter } from '#functions/core/api/http-handler.ts';
import { tenantIdOf } from '#functions/core/auth/principals.ts';
import { addMember } from '#functions/core/directory/groups.ts';

/** PUT /tenant/groups/{id}/members/{userId}: idempotent, a member already there stays. */
export const handler = httpHandler(async (request) => {
  const groupId = idParameter(request, 'id');
  const userId = idParameter(request, 'userId');
  await addMember(tenantIdOf(request.principal), groupId, userId);
  return { status: 200, body: { status: 'success', data: { groupId, userId, member: true } } };
});
