import { httpHandler, idParameter } from '#functions/core/api/http-handler.ts';
import { clientIdOf } from '#functions/core/auth/principals.ts';
import { describeTemplate } from '#functions/core/templates/catalogue.ts';

/** The latest bundle and the version history, with the latest version as ETag (If-Match of a DELETE). */
export const handler = httpHandler(async (request) => {
  const { view, etag } = await describeTemplate(clientIdOf(request.principal), idParameter(request, 'id'));
  return { status: 200, body: { status: 'success', data: view }, headers: { etag } };
});
