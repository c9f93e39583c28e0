import { httpHandler, idParameter } from '../core/api/http-handler.ts';
import { tenantIdOf } from '../core/auth/principals.ts';
import { removeGroup } from '../core/directory/directory.ts';

export const handler = httpHandler(async (request) => {
  await removeGroup(tenantIdOf(request.principal), idParameter(request, 'id'));
  return { status: 200, body: { status: 'success', data: true } };
});
