import { httpHandler } from '#functions/core/api/http-handler.ts';
import updateSettingsSchema from '#functions/core/api/validators/update-settings.cjs';
import { tenantIdOf } from '#functions/core/auth/principals.ts';
import { patchSettings } from '#functions/core/alerts/settings.ts';
import { tenantOwner } from '#functions/core/webhooks/owner.ts';

export const handler = httpHandler(
  async ({ principal, body }) => ({
    status: 200,
    body: {
      status: 'success',
      data: { alertChannels: await patchSettings(tenantOwner(tenantIdOf(principal)), body.alertChannels.webhook) },
    },
  }),
  { body: updateSettingsSchema },
);
