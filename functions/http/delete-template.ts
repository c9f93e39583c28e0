import { httpHandler, idParameter, ifMatchHeader } from '#functions/core/api/http-handler.ts';
import { clientIdOf } from '#functions/core/auth/principals.ts';
import { deleteTemplate } from '#functions/core/templates/catalogue.ts';

/** DELETE /tenants/templates/{id}: 409 while it is the default; tenants keep what it applied. */
export const handler = httpHandler(async (request) => {
  await deleteTemplate(clientIdOf(request.principal), idParameter(request, 'id'), ifMatchHeader(request));
  return { status: 200, body: { status: 'success', data: true } };
});
