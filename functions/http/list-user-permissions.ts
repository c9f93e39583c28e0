import { httpHandler, idParameter } from '#functions/core/api/http-handler.ts';
import { tenantIdOf } from '#functions/core/auth/principals.ts';
import { listPermissions } from '#functions/core/datamarts/permissions.ts';

/** GET /tenant/datamart/{id}/user (spec 4.8): every user permission record of the datamart. */
export const handler = httpHandler(async (request) => {
  const data = await listPermissions(tenantIdOf(request.principal), idParameter(request, 'id'), 'user');
  return { status: 200, body: { status: 'success', data } };
});
