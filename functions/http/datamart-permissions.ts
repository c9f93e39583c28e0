import { type ApiRequest, httpHandler, idParameter } from '../core/api/http-handler.ts';
import setPermissionsSchema, { type SetPermissionsBody } from '../core/api/validators/set-permissions.cjs';
import { tenantIdOf } from '../core/auth/principals.ts';
import { listPermissions, permissionsOfSubject, removePermissions, replacePermissions } from '../core/datamarts/permissions.ts';
import type { PermissionSubject } from '../core/store/keys.ts';

/** Whose records a route is about: its path says `/user` or `/group`. */
const subjectOf = (request: ApiRequest<unknown>): PermissionSubject =>
  /\/group(\/|$)/.test(request.route.path) ? 'group' : 'user';

/**
 * Serves the permission routes of a datamart: GET …/user and …/group (spec 4.8, 4.9), and PUT or
 * DELETE …/user/{userId} and …/group/{groupId}.
 */
export const handler = httpHandler(
  // Only the PUT routes take a body.
  async (request: ApiRequest<SetPermissionsBody | undefined>) => {
    const tenantId = tenantIdOf(request.principal);
    const datamartId = idParameter(request, 'id');
    const subject = subjectOf(request);
    if (request.route.method === 'GET') {
      return { status: 200, body: { status: 'success', data: await listPermissions(tenantId, datamartId, subject) } };
    }
    const subjectId = idParameter(request, subject === 'user' ? 'userId' : 'groupId');
    if (request.route.method === 'PUT')
      await replacePermissions(tenantId, datamartId, subject, subjectId, request.body?.permissions ?? []);
    else await removePermissions(tenantId, datamartId, subject, subjectId);
    return {
      status: 200,
      body: { status: 'success', data: await permissionsOfSubject(tenantId, datamartId, subject, subjectId) },
    };
  },
  { body: setPermissionsSchema },
);
