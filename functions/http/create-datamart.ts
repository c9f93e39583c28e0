import { httpHandler } from '#functions/core/api/http-handler.ts';
import createDatamartSchema from '#functions/core/api/validators/create-datamart.cjs';
import { tenantIdOf } from '#functions/core/auth/principals.ts';
import { createDatamart, describeOneDatamart } from '#functions/core/datamarts/datamarts.ts';

export const handler = httpHandler(
  async ({ principal, body }) => {
    const tenantId = tenantIdOf(principal);
    const created = await createDatamart(tenantId, body);
    return { status: 201, body: { status: 'success', data: await describeOneDatamart(tenantId, created.record.datamartId) } };
  },
  { body: createDatamartSchema },
);
