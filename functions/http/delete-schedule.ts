import { httpHandler, idParameter, ifMatchHeader } from '#functions/core/api/http-handler.ts';
import { tenantIdOf } from '#functions/core/auth/principals.ts';
import { deleteSchedule } from '#functions/core/schedules/schedules.ts';

export const handler = httpHandler(async (request) => {
  await deleteSchedule(tenantIdOf(request.principal), idParameter(request, 'id'), ifMatchHeader(request));
  return { status: 200, body: { status: 'success', data: true } };
});
