import { httpHandler, idParameter } from '#functions/core/api/http-handler.ts';
import setSchedulingGranularitySchema from '#functions/core/api/validators/set-scheduling-granularity.cjs';
import { clientIdOf } from '#functions/core/auth/principals.ts';
import { setSchedulingGranularity } from '#functions/core/schedules/schedules.ts';

/** PATCH /tenants/{id}: the client's settings of a tenant (today, its scheduling granularity). */
export const handler = httpHandler(
  async (request) => {
    const tenant = await setSchedulingGranularity(
      clientIdOf(request.principal),
      idParameter(request, 'id'),
      request.body.schedulingGranularity,
    );
    return { status: 200, body: { status: 'success', data: tenant } };
  },
  { body: setSchedulingGranularitySchema },
);
