import { httpHandler, idParameter } from '../core/api/http-handler.ts';
import { tenantIdOf } from '../core/auth/principals.ts';
import { addMember, removeMember } from '../core/directory/groups.ts';

/** Serves PUT (add, idempotent) and DELETE (remove) of /tenant/groups/{id}/members/{userId}. */
export const handler = httpHandler(async (request) => {
  const tenantId = tenantIdOf(request.principal);
  const groupId = idParameter(request, 'id');
  const userId = idParameter(request, 'userId');
  if (request.route.method === 'PUT') await addMember(tenantId, groupId, userId);
  else await removeMember(tenantId, groupId, userId);
  return { status: 200, body: { status: 'success', data: { groupId, userId, member: request.route.method === 'PUT' } } };
});
