import { httpHandler, pageParameters } from '../core/api/http-handler.ts';
import { tenantIdOf } from '../core/auth/principals.ts';
import { listRuns } from '../core/reload/runs.ts';

export const handler = httpHandler(async (request) => {
  const { limit, cursor } = pageParameters(request);
  const page = await listRuns(tenantIdOf(request.principal), limit, cursor);
  return { status: 200, body: { status: 'success', data: page.items, nextCursor: page.nextCursor } };
});
