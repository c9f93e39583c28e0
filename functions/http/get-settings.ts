import { httpHandler } from '../core/api/http-handler.ts';
import { tenantIdOf } from '../core/auth/principals.ts';
import { findSettings } from '../core/alerts/alert-repository.ts';
import { describeSettings } from '../core/alerts/settings.ts';

export const handler = httpHandler(async ({ principal }) => ({
  status: 200,
  body: { status: 'success', data: describeSettings(await findSettings(tenantIdOf(principal))) },
}));
