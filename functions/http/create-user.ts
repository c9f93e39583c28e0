import { httpHandler } from '#functions/core/api/http-handler.ts';
import createUserSchema from '#functions/core/api/validators/create-user.cjs';
import { tenantIdOf } from '#functions/core/auth/principals.ts';
import type { UserRecord } from '#functions/core/directory/directory-repository.ts';
import { createUser, describeUser } from '#functions/core/directory/users.ts';

const created = (user: UserRecord) => ({ status: 201, body: { status: 'success', data: describeUser(user) } });

export const handler = httpHandler(
  async ({ principal, body, idempotency }) =>
    created(await createUser(tenantIdOf(principal), body, idempotency.resumable(created))),
  { body: createUserSchema },
);
