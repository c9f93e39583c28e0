import { httpHandler, idParameter } from '#functions/core/api/http-handler.ts';
import { tenantIdOf } from '#functions/core/auth/principals.ts';
import { describeUserWithAccess } from '#functions/core/directory/directory.ts';

/** GET /tenant/users/{id}: the user with their groups and effective permissions (bounded by the quotas). */
export const handler = httpHandler(async (request) => {
  const userId = idParameter(request, 'id');
  return {
    status: 200,
    body: { status: 'success', data: await describeUserWithAccess(tenantIdOf(request.principal), userId) },
  };
});
