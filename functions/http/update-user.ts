import { httpHandler, idParameter } from '#functions/core/api/http-handler.ts';
import updateUserSchema from '#functions/core/api/validators/update-user.cjs';
import { tenantIdOf } from '#functions/core/auth/principals.ts';
import { describeUser, updateUser } from '#functions/core/directory/users.ts';

export const handler = httpHandler(
  async (request) => ({
    status: 200,
    body: {
      status: 'success',
      data: describeUser(await updateUser(tenantIdOf(request.principal), idParameter(request, 'id'), request.body)),
    },
  }),
  { body: updateUserSchema },
);
