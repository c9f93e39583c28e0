import { httpHandler, idParameter } from '#functions/core/api/http-handler.ts';
import { tenantIdOf } from '#functions/core/auth/principals.ts';
import { removePermissions } from '#functions/core/datamarts/permissions.ts';

/** DELETE /tenant/datamart/{id}/group/{groupId}: the group has no record on the datamart any more. */
export const handler = httpHandler(async (request) => {
  const tenantId = tenantIdOf(request.principal);
  const data = await removePermissions(tenantId, idParameter(request, 'id'), 'group', idParameter(request, 'groupId'));
  return { status: 200, body: { status: 'success', data } };
});
