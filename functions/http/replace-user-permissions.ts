import { httpHandler, idParameter } from '../core/api/http-handler.ts';
import setPermissionsSchema from '../core/api/validators/set-permissions.cjs';
import { tenantIdOf } from '../core/auth/principals.ts';
import { replacePermissions } from '../core/datamarts/permissions.ts';

/** PUT /tenant/datamart/{id}/user/{userId}: the user's records on the datamart become the body's. */
export const handler = httpHandler(
  async (request) => {
    const tenantId = tenantIdOf(request.principal);
    const datamartId = idParameter(request, 'id');
    const data = await replacePermissions(tenantId, datamartId, 'user', idParameter(request, 'userId'), request.body.permissions);
    return { status: 200, body: { status: 'success', data } };
  },
  { body: setPermissionsSchema },
);
