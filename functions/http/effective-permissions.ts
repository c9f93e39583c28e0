import { httpHandler, idParameter } from '../core/api/http-handler.ts';
import { tenantIdOf } from '../core/auth/principals.ts';
import { loadStructure } from '../core/datamarts/datamarts.ts';
import { effectiveAccess } from '../core/datamarts/permissions.ts';
import { requireUser } from '../core/directory/users.ts';

/** What a user may really see of each table of a datamart: their own records over their groups' (DESIGN 7). */
export const handler = httpHandler(async (request) => {
  const tenantId = tenantIdOf(request.principal);
  const datamartId = idParameter(request, 'id');
  const userId = idParameter(request, 'userId');
  await Promise.all([loadStructure(tenantId, datamartId), requireUser(tenantId, userId)]);
  const access = await effectiveAccess(tenantId, [userId], { datamartId });
  const permissions = (access.get(userId) ?? []).map(({ datamartId: _datamart, ...permission }) => permission);
  return { status: 200, body: { status: 'success', data: permissions } };
});
