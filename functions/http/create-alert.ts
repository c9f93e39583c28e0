import { httpHandler } from '#functions/core/api/http-handler.ts';
import createAlertSchema from '#functions/core/api/validators/create-alert.cjs';
import { tenantIdOf } from '#functions/core/auth/principals.ts';
import { createAlert } from '#functions/core/alerts/alerts.ts';

export const handler = httpHandler(
  async ({ principal, body }) => ({
    status: 201,
    body: { status: 'success', data: await createAlert(tenantIdOf(principal), body) },
  }),
  { body: createAlertSchema },
);
