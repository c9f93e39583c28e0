import { httpHandler, idParameter } from '#functions/core/api/http-handler.ts';
import updateAlertSchema from '#functions/core/api/validators/update-alert.cjs';
import { tenantIdOf } from '#functions/core/auth/principals.ts';
import { updateAlert } from '#functions/core/alerts/alerts.ts';

export const handler = httpHandler(
  async (request) => ({
    status: 200,
    body: {
      status: 'success',
      data: await updateAlert(tenantIdOf(request.principal), idParameter(request, 'id'), request.body),
    },
  }),
  { body: updateAlertSchema },
);
