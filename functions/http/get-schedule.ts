import { httpHandler, idParameter } from '#functions/core/api/http-handler.ts';
import { tenantIdOf } from '#functions/core/auth/principals.ts';
import { scheduleResponse } from './schedule-response.ts';
import { getSchedule } from '#functions/core/schedules/schedules.ts';

/** The schedule file, as YAML when Accept prefers it, else JSON; ETag = its version. */
export const handler = httpHandler(async (request) =>
  scheduleResponse(request, await getSchedule(tenantIdOf(request.principal), idParameter(request, 'id')), 200),
);
