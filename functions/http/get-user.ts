import { httpHandler, idParameter } from '../core/api/http-handler.ts';
import { tenantIdOf } from '../core/auth/principals.ts';
import { describeUserWithAccess } from '../core/directory/directory.ts';

export const handler = httpHandler(async (request) => ({
  status: 200,
  body: { status: 'success', data: await describeUserWithAccess(tenantIdOf(request.principal), idParameter(request, 'id')) },
}));
