import { httpHandler } from '#functions/core/api/http-handler.ts';
import revokeLoginSchema from '#functions/core/api/validators/revoke-login.cjs';
import { tenantIdOf } from '#functions/core/auth/principals.ts';
import { revokeLogins } from '#functions/core/sso/revoke-logins.ts';

export const handler = httpHandler(
  async ({ principal, body }) => {
    await revokeLogins(tenantIdOf(principal), body.login);
    return { status: 200, body: { success: true } };
  },
  { body: revokeLoginSchema },
);
