import { httpHandler, idParameter, integerQueryParameter } from '../core/api/http-handler.ts';
import { tenantIdOf } from '../core/auth/principals.ts';
import { previewFires } from '../core/schedules/schedules.ts';

/** The next `count` (1 to 100, default 10) fire instants, in UTC and in the schedule's time zone. */
export const handler = httpHandler(async (request) => {
  const count = integerQueryParameter(request, 'count', { min: 1, max: 100, fallback: 10 });
  const preview = await previewFires(tenantIdOf(request.principal), idParameter(request, 'id'), count);
  return { status: 200, body: { status: 'success', data: preview } };
});
