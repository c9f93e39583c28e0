import { httpHandler } from '#functions/core/api/http-handler.ts';
import createGroupSchema from '#functions/core/api/validators/create-group.cjs';
import { tenantIdOf } from '#functions/core/auth/principals.ts';
import { createGroup } from '#functions/core/directory/groups.ts';

export const handler = httpHandler(
  async ({ principal, body }) => {
    const group = await createGroup(tenantIdOf(principal), body.nome);
    return { status: 201, body: { status: 'success', data: { id: group.groupId, nome: group.nome, members: [] } } };
  },
  { body: createGroupSchema },
);
