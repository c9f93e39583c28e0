import { httpHandler, pageResponse, pageParameters } from '#functions/core/api/http-handler.ts';
import { tenantIdOf } from '#functions/core/auth/principals.ts';
import { listRuns } from '#functions/core/reload/runs.ts';

export const handler = httpHandler(async (request) => {
  const { limit, cursor } = pageParameters(request);
  const page = await listRuns(tenantIdOf(request.principal), limit, cursor);
  return pageResponse(page);
});
