import { httpHandler, pageResponse, pageParameters } from '#functions/core/api/http-handler.ts';
import { tenantIdOf } from '#functions/core/auth/principals.ts';
import { listAlerts } from '#functions/core/alerts/alerts.ts';

export const handler = httpHandler(async (request) => {
  const { limit, cursor } = pageParameters(request);
  const page = await listAlerts(tenantIdOf(request.principal), limit, cursor);
  return pageResponse(page);
});
