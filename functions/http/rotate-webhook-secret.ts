import { httpHandler } from '#functions/core/api/http-handler.ts';
import { tenantIdOf } from '#functions/core/auth/principals.ts';
import { rotateSigningSecret } from '#functions/core/alerts/settings.ts';
import { tenantOwner } from '#functions/core/webhooks/owner.ts';

export const handler = httpHandler(async ({ principal }) => ({
  status: 200,
  body: { status: 'success', data: { alertChannels: await rotateSigningSecret(tenantOwner(tenantIdOf(principal))) } },
}));
