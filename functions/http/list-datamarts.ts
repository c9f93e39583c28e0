import { httpHandler, wholeListParameters } from '#functions/core/api/http-handler.ts';
import { listAnswer } from '#functions/core/api/whole-list.ts';
import { tenantIdOf } from '#functions/core/auth/principals.ts';
import { listDatamarts } from '#functions/core/datamarts/datamarts.ts';

/** Spec 4.7: `{status, data: [datamart]}` with tables, columns and owners: every datamart, or a page with `limit`. */
export const handler = httpHandler(async (request) => {
  const { limit, cursor } = wholeListParameters(request);
  const page = await listDatamarts(tenantIdOf(request.principal), limit, cursor);
  return { status: 200, body: listAnswer(page, limit) };
});
