import { httpHandler, idParameter } from '../core/api/http-handler.ts';
import { tenantIdOf } from '../core/auth/principals.ts';
import { removeUser } from '../core/directory/directory.ts';

/** Unlinks the user: their login tokens and sessions stop working at once. */
export const handler = httpHandler(async (request) => {
  await removeUser(tenantIdOf(request.principal), idParameter(request, 'id'));
  return { status: 200, body: { status: 'success', data: true } };
});
