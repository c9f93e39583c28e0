import { httpHandler } from '#functions/core/api/http-handler.ts';
import updateClientSettingsSchema from '#functions/core/api/validators/update-client-settings.cjs';
import { clientIdOf } from '#functions/core/auth/principals.ts';
import { patchSettings } from '#functions/core/alerts/settings.ts';
import { clientOwner } from '#functions/core/webhooks/owner.ts';

export const handler = httpHandler(
  async ({ principal, body }) => ({
    status: 200,
    body: { status: 'success', data: await patchSettings(clientOwner(clientIdOf(principal)), body.webhook) },
  }),
  { body: updateClientSettingsSchema },
);
