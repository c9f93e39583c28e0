import {
  httpHandler,
  idParameter,
  integerQueryParameter,
  pageParameters,
  pageResponse,
  queryParameter,
} from '#functions/core/api/http-handler.ts';
import { clientIdOf } from '#functions/core/auth/principals.ts';
import { listTemplateTenants } from '#functions/core/templates/fleet.ts';

export const handler = httpHandler(async (request) => {
  const belowVersion =
    queryParameter(request, 'belowVersion') === undefined ? undefined : integerQueryParameter(request, 'belowVersion');
  const page = await listTemplateTenants(clientIdOf(request.principal), idParameter(request, 'id'), {
    belowVersion,
    ...pageParameters(request),
  });
  return pageResponse(page);
});
