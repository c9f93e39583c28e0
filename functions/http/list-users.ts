import { httpHandler, textQueryParameter, wholeListParameters } from '#functions/core/api/http-handler.ts';
import { listAnswer } from '#functions/core/api/whole-list.ts';
import { tenantIdOf } from '#functions/core/auth/principals.ts';
import { listUsersWithAccess, listUsersWithAccessByLogin } from '#functions/core/directory/directory.ts';

/**
 * Spec 4.10 GET /tenant/users: every user with their groups and effective permissions, or a page with
 * `limit`; each user is built and measured in turn, and an answer too large for one result is a 400.
 * `login`: the one user with that login, or none.
 */
export const handler = httpHandler(async (request) => {
  const { limit, cursor } = wholeListParameters(request);
  const tenantId = tenantIdOf(request.principal);
  const login = textQueryParameter(request, 'login');
  const page =
    login === undefined
      ? await listUsersWithAccess(tenantId, limit, cursor)
      : await listUsersWithAccessByLogin(tenantId, login, cursor);
  return { status: 200, body: listAnswer(page, limit, (user) => `user ${user.id}`) };
});
