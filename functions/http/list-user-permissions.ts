import { httpHandler, idParameter, wholeListParameters } from '#functions/core/api/http-handler.ts';
import { listAnswer } from '#functions/core/api/whole-list.ts';
import { tenantIdOf } from '#functions/core/auth/principals.ts';
import { listPermissions } from '#functions/core/datamarts/permissions.ts';

/** GET /tenant/datamart/{id}/user (spec 4.8): every user permission record of the datamart, or a page with `limit`. */
export const handler = httpHandler(async (request) => {
  const { limit, cursor } = wholeListParameters(request);
  const page = await listPermissions(tenantIdOf(request.principal), idParameter(request, 'id'), 'user', limit, cursor);
  return { status: 200, body: listAnswer(page, limit) };
});
