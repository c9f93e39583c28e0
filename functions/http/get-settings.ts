import { httpHandler } from '#functions/core/api/http-handler.ts';
import { tenantIdOf } from '#functions/core/auth/principals.ts';
import { findSettings } from '#functions/core/alerts/alert-repository.ts';
import { describeSettings } from '#functions/core/alerts/settings.ts';

export const handler = httpHandler(async ({ principal }) => ({
  status: 200,
  body: { status: 'success', data: describeSettings(await findSettings(tenantIdOf(principal))) },
}));
