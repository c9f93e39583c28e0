import { httpHandler, idParameter } from '#functions/core/api/http-handler.ts';
import { tenantIdOf } from '#functions/core/auth/principals.ts';
import { describeUserWithAccess } from '#functions/core/directory/directory.ts';

export const handler = httpHandler(async (request) => ({
  status: 200,
  body: { status: 'success', data: await describeUserWithAccess(tenantIdOf(request.principal), idParameter(request, 'id')) },
}));
