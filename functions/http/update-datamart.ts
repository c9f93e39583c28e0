import { httpHandler, idParameter } from '../core/api/http-handler.ts';
import updateDatamartSchema from '../core/api/validators/update-datamart.cjs';
import { tenantIdOf } from '../core/auth/principals.ts';
import { describeOneDatamart, updateDatamart } from '../core/datamarts/datamarts.ts';

export const handler = httpHandler(
  async (request) => {
    const tenantId = tenantIdOf(request.principal);
    const datamartId = idParameter(request, 'id');
    await updateDatamart(tenantId, datamartId, request.body);
    return { status: 200, body: { status: 'success', data: await describeOneDatamart(tenantId, datamartId) } };
  },
  { body: updateDatamartSchema },
);
