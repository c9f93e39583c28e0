import { httpHandler, idParameter } from '#functions/core/api/http-handler.ts';
import { tenantIdOf } from '#functions/core/auth/principals.ts';
import { describeOneDatamart } from '#functions/core/datamarts/datamarts.ts';

/** GET /tenant/datamart/{id}: one datamart as spec 2.3 shows it. */
export const handler = httpHandler(async (request) => {
  const datamartId = idParameter(request, 'id');
  return {
    status: 200,
    body: { status: 'success', data: await describeOneDatamart(tenantIdOf(request.principal), datamartId) },
  };
});
