import { httpHandler, idParameter } from '#functions/core/api/http-handler.ts';
import { tenantIdOf } from '#functions/core/auth/principals.ts';
import { effectiveOnDatamart } from '#functions/core/datamarts/permissions.ts';

/** What a user may really see of each table of a datamart: their own records over their groups' (DESIGN 7). */
export const handler = httpHandler(async (request) => ({
  status: 200,
  body: {
    status: 'success',
    data: await effectiveOnDatamart(tenantIdOf(request.principal), idParameter(request, 'id'), idParameter(request, 'userId')),
  },
}));
