import { httpHandler } from '#functions/core/api/http-handler.ts';
import loginSchema from '#functions/core/api/validators/login.cjs';
import { tenantIdOf } from '#functions/core/auth/principals.ts';
import { createLogin } from '#functions/core/sso/login.ts';

/** Spec 4.6: `{success: true, token, url}`. */
export const handler = httpHandler(
  async ({ principal, body }) => ({
    status: 200,
    body: await createLogin(tenantIdOf(principal), body),
  }),
  { body: loginSchema },
);
