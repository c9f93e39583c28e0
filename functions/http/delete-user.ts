import { httpHandler, idParameter } from '../core/api/http-handler.ts';
import { tenantIdOf } from '../core/auth/principals.ts';
import { deleteUser } from '../core/directory/users.ts';

/** Unlinks the user: their login tokens and sessions stop working at once. */
export const handler = httpHandler(async (request) => {
  await deleteUser(tenantIdOf(request.principal), idParameter(request, 'id'));
  return { status: 200, body: { status: 'success', data: true } };
});
