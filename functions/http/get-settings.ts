import { httpHandler } from '../core/api/http-handler.ts';
import { tenantIdOf } from '../core/auth/principals.ts';
import { describeSettings, findSettings } from '../core/alerts/settings.ts';

export const handler = httpHandler(async ({ principal }) => ({
  status: 200,
  body: { status: 'success', data: describeSettings(await findSettings(tenantIdOf(principal))) },
}));
