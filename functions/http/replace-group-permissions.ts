import { httpHandler, idParameter } from '#functions/core/api/http-handler.ts';
import setPermissionsSchema from '#functions/core/api/validators/set-permissions.cjs';
import { tenantIdOf } from '#functions/core/auth/principals.ts';
import { replacePermissions } from '#functions/core/datamarts/permissions.ts';

/** PUT /tenant/datamart/{id}/group/{groupId}: the group's records on the datamart become the body's. */
export const handler = httpHandler(
  async (request) => {
    const tenantId = tenantIdOf(request.principal);
    const datamartId = idParameter(request, 'id');
    const data = await replacePermissions(
      tenantId,
      datamartId,
      'group',
      idParameter(request, 'groupId'),
      request.body.permissions,
    );
    return { status: 200, body: { status: 'success', data } };
  },
  { body: setPermissionsSchema },
);
