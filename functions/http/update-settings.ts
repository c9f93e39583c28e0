import { httpHandler } from '#functions/core/api/http-handler.ts';
import updateSettingsSchema from '#functions/core/api/validators/update-settings.cjs';
import { tenantIdOf } from '#functions/core/auth/principals.ts';
import { patchSettings } from '#functions/core/alerts/settings.ts';

export const handler = httpHandler(
  async ({ principal, body }) => ({
    status: 200,
    body: { status: 'success', data: await patchSettings(tenantIdOf(principal), body) },
  }),
  { body: updateSettingsSchema },
);
