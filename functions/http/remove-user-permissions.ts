import { httpHandler, idParameter } from '#functions/core/api/http-handler.ts';
import { tenantIdOf } from '#functions/core/auth/principals.ts';
import { removePermissions } from '#functions/core/datamarts/permissions.ts';

/** DELETE /tenant/datamart/{id}/user/{userId}: the user has no record on the datamart any more. */
export const handler = httpHandler(async (request) => {
  const tenantId = tenantIdOf(request.principal);
  const data = await removePermissions(tenantId, idParameter(request, 'id'), 'user', idParameter(request, 'userId'));
  return { status: 200, body: { status: 'success', data } };
});
