import {
  booleanQueryParameter,
  httpHandler,
  pageParameters,
  pageResponse,
  textQueryParameter,
} from '#functions/core/api/http-handler.ts';
import { clientIdOf } from '#functions/core/auth/principals.ts';
import { listTenants } from '#functions/core/tenants/tenants.ts';

export const handler = httpHandler(async (request) => {
  const { limit, cursor } = pageParameters(request);
  const filter = { nome: textQueryParameter(request, 'nome'), ativo: booleanQueryParameter(request, 'ativo') };
  return pageResponse(await listTenants(clientIdOf(request.principal), filter, limit, cursor));
});
