import { httpHandler, idParameter } from '#functions/core/api/http-handler.ts';
import { tenantIdOf } from '#functions/core/auth/principals.ts';
import { listPermissions } from '#functions/core/datamarts/permissions.ts';

/** GET /tenant/datamart/{id}/group (spec 4.9): every group permission record of the datamart. */
export const handler = httpHandler(async (request) => {
  const data = await listPermissions(tenantIdOf(request.principal), idParameter(request, 'id'), 'group');
  return { status: 200, body: { status: 'success', data } };
});
