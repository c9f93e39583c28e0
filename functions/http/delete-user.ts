import { httpHandler, idParameter } from '#functions/core/api/http-handler.ts';
import { tenantIdOf } from '#functions/core/auth/principals.ts';
import { removeUser } from '#functions/core/directory/directory.ts';

/** Unlinks the user: their login tokens and sessions stop working at once. */
export const handler = httpHandler(async (request) => {
  await removeUser(tenantIdOf(request.principal), idParameter(request, 'id'));
  return { status: 200, body: { status: 'success', data: true } };
});
