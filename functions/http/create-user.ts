import { httpHandler } from '#functions/core/api/http-handler.ts';
import createUserSchema from '#functions/core/api/validators/create-user.cjs';
import { tenantIdOf } from '#functions/core/auth/principals.ts';
import { createUser, describeUser } from '#functions/core/directory/users.ts';

export const handler = httpHandler(
  async ({ principal, body }) => ({
    status: 201,
    body: { status: 'success', data: describeUser(await createUser(tenantIdOf(principal), body)) },
  }),
  { body: createUserSchema },
);
