import { httpHandler, pageParameters } from '#functions/core/api/http-handler.ts';
import { tenantIdOf } from '#functions/core/auth/principals.ts';
import { listDatamarts } from '#functions/core/datamarts/datamarts.ts';

/** Spec 4.7: `{status, data: [datamart]}` with tables, columns and owners; paginated. */
export const handler = httpHandler(async (request) => {
  const { limit, cursor } = pageParameters(request);
  const page = await listDatamarts(tenantIdOf(request.principal), limit, cursor);
  return { status: 200, body: { status: 'success', data: page.items, nextCursor: page.nextCursor } };
});
