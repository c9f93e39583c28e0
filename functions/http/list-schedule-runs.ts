import { httpHandler, idParameter, pageParameters, pageResponse } from '#functions/core/api/http-handler.ts';
import { tenantIdOf } from '#functions/core/auth/principals.ts';
import { listRuns } from '#functions/core/schedules/schedules.ts';

/** The schedule's fires, newest first, each with what became of its flows. */
export const handler = httpHandler(async (request) => {
  const { limit, cursor } = pageParameters(request);
  const page = await listRuns(tenantIdOf(request.principal), idParameter(request, 'id'), limit, cursor);
  return pageResponse(page);
});
