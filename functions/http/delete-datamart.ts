import { httpHandler, idParameter } from '#functions/core/api/http-handler.ts';
import { tenantIdOf } from '#functions/core/auth/principals.ts';
import { deleteDatamart } from '#functions/core/datamarts/datamarts.ts';

export const handler = httpHandler(async (request) => {
  await deleteDatamart(tenantIdOf(request.principal), idParameter(request, 'id'));
  return { status: 200, body: { status: 'success', data: true } };
});
