import { httpHandler, pageResponse, pageParameters } from '#functions/core/api/http-handler.ts';
import { clientIdOf } from '#functions/core/auth/principals.ts';
import { listTenants } from '#functions/core/tenants/tenants.ts';

export const handler = httpHandler(async (request) => {
  const { limit, cursor } = pageParameters(request);
  const page = await listTenants(clientIdOf(request.principal), limit, cursor);
  return pageResponse(page);
});
