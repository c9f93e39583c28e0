import { httpHandler, idParameter } from '#functions/core/api/http-handler.ts';
import { tenantIdOf } from '#functions/core/auth/principals.ts';
import { describeGroup } from '#functions/core/directory/groups.ts';

/** GET /tenant/groups/{id}: one group with its members, as GET /tenant/groups lists them. */
export const handler = httpHandler(async (request) => {
  const groupId = idParameter(request, 'id');
  return {
    status: 200,
    body: { status: 'success', data: await describeGroup(tenantIdOf(request.principal), groupId) },
  };
});
