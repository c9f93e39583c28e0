import { httpHandler, idParameter } from '../core/api/http-handler.ts';
import { tenantIdOf } from '../core/auth/principals.ts';
import { listPermissions } from '../core/datamarts/permissions.ts';

/** GET /tenant/datamart/{id}/user (spec 4.8): every user permission record of the datamart. */
export const handler = httpHandler(async (request) => {
  const data = await listPermissions(tenantIdOf(request.principal), idParameter(request, 'id'), 'user');
  return { status: 200, body: { status: 'success', data } };
});
