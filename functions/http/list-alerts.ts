import { httpHandler, pageParameters } from '../core/api/http-handler.ts';
import { tenantIdOf } from '../core/auth/principals.ts';
import { listAlerts } from '../core/alerts/alerts.ts';

export const handler = httpHandler(async (request) => {
  const { limit, cursor } = pageParameters(request);
  const page = await listAlerts(tenantIdOf(request.principal), limit, cursor);
  return { status: 200, body: { status: 'success', data: page.items, nextCursor: page.nextCursor } };
});
