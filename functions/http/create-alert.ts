import { httpHandler } from '../core/api/http-handler.ts';
import createAlertSchema from '../core/api/validators/create-alert.cjs';
import { tenantIdOf } from '../core/auth/principals.ts';
import { createAlert } from '../core/alerts/alerts.ts';

export const handler = httpHandler(
  async ({ principal, body }) => ({
    status: 201,
    body: { status: 'success', data: await createAlert(tenantIdOf(principal), body) },
  }),
  { body: createAlertSchema },
);
