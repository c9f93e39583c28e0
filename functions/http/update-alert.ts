import { httpHandler, idParameter } from '../core/api/http-handler.ts';
import updateAlertSchema from '../core/api/validators/update-alert.cjs';
import { tenantIdOf } from '../core/auth/principals.ts';
import { updateAlert } from '../core/alerts/alerts.ts';

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
