import { httpHandler } from '#functions/core/api/http-handler.ts';
import { clientIdOf } from '#functions/core/auth/principals.ts';
import { getSettings } from '#functions/core/alerts/settings.ts';
import { clientOwner } from '#functions/core/webhooks/owner.ts';

export const handler = httpHandler(async ({ principal }) => ({
  status: 200,
  body: { status: 'success', data: await getSettings(clientOwner(clientIdOf(principal))) },
}));
