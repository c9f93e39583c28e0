import { httpHandler, idParameter, ifMatchHeader } from '../core/api/http-handler.ts';
import { tenantIdOf } from '../core/auth/principals.ts';
import { deleteSchedule } from '../core/schedules/schedules.ts';

export const handler = httpHandler(async (request) => {
  await deleteSchedule(tenantIdOf(request.principal), idParameter(request, 'id'), ifMatchHeader(request));
  return { status: 200, body: { status: 'success', data: true } };
});
