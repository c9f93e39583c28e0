import { httpHandler, idParameter } from '../core/api/http-handler.ts';
import { tenantIdOf } from '../core/auth/principals.ts';
import { deleteDatamart } from '../core/datamarts/datamarts.ts';

export const handler = httpHandler(async (request) => {
  await deleteDatamart(tenantIdOf(request.principal), idParameter(request, 'id'));
  return { status: 200, body: { status: 'success', data: true } };
});
