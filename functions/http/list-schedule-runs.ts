import { httpHandler, idParameter, pageParameters } from '#functions/core/api/http-handler.ts';
import { tenantIdOf } from '#functions/core/auth/principals.ts';
import { listRuns } from '#functions/core/schedules/schedules.ts';

/** The schedule's fires, newest first, each with what became of its flows. */
export const handler = httpHandler(async (request) => {
  const { limit, cursor } = pageParameters(request);
  const page = await listRuns(tenantIdOf(request.principal), idParameter(request, 'id'), limit, cursor);
  return { status: 200, body: { status: 'success', data: page.items, nextCursor: page.nextCursor } };
});
