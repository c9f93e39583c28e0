import { httpHandler } from '#functions/core/api/http-handler.ts';
import createDatamartSchema from '#functions/core/api/validators/create-datamart.cjs';
import { tenantIdOf } from '#functions/core/auth/principals.ts';
import { createDatamart, type DatamartView } from '#functions/core/datamarts/datamarts.ts';

const created = (datamart: DatamartView) => ({ status: 201, body: { status: 'success', data: datamart } });

export const handler = httpHandler(
  async ({ principal, body, idempotency }) =>
    created(await createDatamart(tenantIdOf(principal), body, idempotency.resumable(created))),
  { body: createDatamartSchema },
);
