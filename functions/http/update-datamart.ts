import { httpHandler, idParameter } from '#functions/core/api/http-handler.ts';
import updateDatamartSchema from '#functions/core/api/validators/update-datamart.cjs';
import { tenantIdOf } from '#functions/core/auth/principals.ts';
import { updateDatamart } from '#functions/core/datamarts/datamarts.ts';

export const handler = httpHandler(
  async (request) => ({
    status: 200,
    body: {
      status: 'success',
      data: await updateDatamart(tenantIdOf(request.principal), idParameter(request, 'id'), request.body),
    },
  }),
  { body: updateDatamartSchema },
);
