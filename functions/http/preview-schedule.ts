import { httpHandler, idParameter, integerQueryParameter } from '#functions/core/api/http-handler.ts';
import { tenantIdOf } from '#functions/core/auth/principals.ts';
import { previewFires } from '#functions/core/schedules/schedules.ts';

/** The next `count` fire instants (its range and default are the route row's), in UTC and in the schedule's time zone. */
export const handler = httpHandler(async (request) => {
  const count = integerQueryParameter(request, 'count');
  const preview = await previewFires(tenantIdOf(request.principal), idParameter(request, 'id'), count);
  return { status: 200, body: { status: 'success', data: preview } };
});
