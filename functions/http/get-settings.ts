import { httpHandler } from '#functions/core/api/http-handler.ts';
import { tenantIdOf } from '#functions/core/auth/principals.ts';
import { getSettings } from '#functions/core/alerts/settings.ts';
import { tenantOwner } from '#functions/core/webhooks/owner.ts';

export const handler = httpHandler(async ({ principal }) => ({
  status: 200,
  body: { status: 'success', data: { alertChannels: await getSettings(tenantOwner(tenantIdOf(principal))) } },
}));
