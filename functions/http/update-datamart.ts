import { httpHandler, idParameter } from '#functions/core/api/http-handler.ts';
import updateDatamartSchema from '#functions/core/api/validators/update-datamart.cjs';
import { tenantIdOf } from '#functions/core/auth/principals.ts';
import { describeOneDatamart, updateDatamart } from '#functions/core/datamarts/datamarts.ts';

export const handler = httpHandler(
  async (request) => {
    const tenantId = tenantIdOf(request.principal);
    const datamartId = idParameter(request, 'id');
    await updateDatamart(tenantId, datamartId, request.body);
    return { status: 200, body: { status: 'success', data: await describeOneDatamart(tenantId, datamartId) } };
  },
  { body: updateDatamartSchema },
);
