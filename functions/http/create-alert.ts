import { httpHandler } from '#functions/core/api/http-handler.ts';
import createAlertSchema from '#functions/core/api/validators/create-alert.cjs';
import { tenantIdOf } from '#functions/core/auth/principals.ts';
import { type AlertView, createAlert } from '#functions/core/alerts/alerts.ts';

const created = (alert: AlertView) => ({ status: 201, body: { status: 'success', data: alert } });

export const handler = httpHandler(
  async ({ principal, body, idempotency }) =>
    created(await createAlert(tenantIdOf(principal), body, idempotency.resumable(created))),
  { body: createAlertSchema },
);
