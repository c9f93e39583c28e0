import { httpHandler } from '../core/api/http-handler.ts';
import createUserSchema from '../core/api/validators/create-user.cjs';
import { tenantIdOf } from '../core/auth/principals.ts';
import { createUser, describeUser } from '../core/directory/users.ts';

export const handler = httpHandler(
  async ({ principal, body }) => ({
    status: 201,
    body: { status: 'success', data: describeUser(await createUser(tenantIdOf(principal), body)) },
  }),
  { body: createUserSchema },
);
