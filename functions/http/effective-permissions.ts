import { httpHandler, idParameter } from '../core/api/http-handler.ts';
import { tenantIdOf } from '../core/auth/principals.ts';
import { effectiveOnDatamart } from '../core/datamarts/permissions.ts';

/** What a user may really see of each table of a datamart: their own records over their groups' (DESIGN 7). */
export const handler = httpHandler(async (request) => ({
  status: 200,
  body: {
    status: 'success',
    data: await effectiveOnDatamart(tenantIdOf(request.principal), idParameter(request, 'id'), idParameter(request, 'userId')),
  },
}));
