import { httpHandler } from '../core/api/http-handler.ts';
import updateSettingsSchema from '../core/api/validators/update-settings.cjs';
import { tenantIdOf } from '../core/auth/principals.ts';
import { patchSettings } from '../core/alerts/settings.ts';

export const handler = httpHandler(
  async ({ principal, body }) => ({
    status: 200,
    body: { status: 'success', data: await patchSettings(tenantIdOf(principal), body) },
  }),
  { body: updateSettingsSchema },
);
