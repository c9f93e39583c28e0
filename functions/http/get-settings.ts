import { httpHandler } from '#functions/core/api/http-handler.ts';
import { tenantIdOf } from '#functions/core/auth/principals.ts';
import { getSettings } from '#functions/core/alerts/settings.ts';

export const handler = httpHandler(async ({ principal }) => ({
  status: 200,
  body: { status: 'success', data: await getSettings(tenantIdOf(principal)) },
}));
