import { httpHandler, idParameter } from '#functions/core/api/http-handler.ts';
import { tenantIdOf } from '#functions/core/auth/principals.ts';
import { getRun } from '#functions/core/reload/runs.ts';

export const handler = httpHandler(async (request) => ({
  status: 200,
  body: { status: 'success', data: await getRun(tenantIdOf(request.principal), idParameter(request, 'id')) },
}));
