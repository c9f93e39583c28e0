import { httpHandler, idParameter, ifMatchHeader } from '#functions/core/api/http-handler.ts';
import scheduleV2Schema from '#functions/core/api/validators/schedule.v2.cjs';
import { parseYamlBody } from '#functions/core/api/yaml-body.ts';
import { principalScope, tenantIdOf } from '#functions/core/auth/principals.ts';
import { scheduleResponse } from './schedule-response.ts';
import { putSchedule } from '#functions/core/schedules/schedules.ts';

/** 201 with the stored file when created, 200 when replaced (or unchanged); ETag = its version. */
export const handler = httpHandler(
  async (request) => {
    const tenantId = tenantIdOf(request.principal);
    const { record, created } = await putSchedule(tenantId, idParameter(request, 'id'), request.body, {
      ifMatch: ifMatchHeader(request),
      actor: principalScope(request.principal),
    });
    return scheduleResponse(request, record, created ? 201 : 200);
  },
  // putSchedule checks the schema and the rules beyond it together, to report every problem at once.
  { body: scheduleV2Schema, yaml: parseYamlBody, validatedByHandler: true },
);
