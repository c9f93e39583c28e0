import { httpHandler, pageResponse, pageParameters } from '#functions/core/api/http-handler.ts';
import { tenantIdOf } from '#functions/core/auth/principals.ts';
import { listSchedules } from '#functions/core/schedules/schedules.ts';

export const handler = httpHandler(async (request) => {
  const { limit, cursor } = pageParameters(request);
  const page = await listSchedules(tenantIdOf(request.principal), limit, cursor);
  return pageResponse(page);
});
