import { httpHandler } from '../core/api/http-handler.ts';
import { tenantIdOf } from '../core/auth/principals.ts';
import { rotateSigningSecret } from '../core/alerts/settings.ts';

export const handler = httpHandler(async ({ principal }) => ({
  status: 200,
  body: { status: 'success', data: await rotateSigningSecret(tenantIdOf(principal)) },
}));
