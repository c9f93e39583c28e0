import { httpHandler } from '#functions/core/api/http-handler.ts';
import createGroupSchema from '#functions/core/api/validators/create-group.cjs';
import { tenantIdOf } from '#functions/core/auth/principals.ts';
import type { GroupRecord } from '#functions/core/directory/directory-repository.ts';
import { createGroup } from '#functions/core/directory/groups.ts';

const created = (group: GroupRecord) => ({
  status: 201,
  body: { status: 'success', data: { id: group.groupId, nome: group.nome, members: [] } },
});

export const handler = httpHandler(
  async ({ principal, body, idempotency }) =>
    created(await createGroup(tenantIdOf(principal), body.nome, idempotency.resumable(created))),
  { body: createGroupSchema },
);
