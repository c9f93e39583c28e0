import { httpHandler, wholeListParameters } from '#functions/core/api/http-handler.ts';
import { listAnswer } from '#functions/core/api/whole-list.ts';
import { clientIdOf } from '#functions/core/auth/principals.ts';
import { listTemplates } from '#functions/core/templates/catalogue.ts';

/** Spec 4.2: `{status, data: [{id, nome}]}`: every template, or a page with `limit`. */
export const handler = httpHandler(async (request) => {
  const { limit, cursor } = wholeListParameters(request);
  const page = await listTemplates(clientIdOf(request.principal), limit, cursor);
  return { status: 200, body: listAnswer(page, limit) };
});
