import { httpHandler, idParameter, pageParameters, pageResponse } from '#functions/core/api/http-handler.ts';
import { clientIdOf } from '#functions/core/auth/principals.ts';
import { listRollouts } from '#functions/core/rollouts/rollouts.ts';

export const handler = httpHandler(async (request) => {
  const { limit, cursor } = pageParameters(request);
  return pageResponse(await listRollouts(clientIdOf(request.principal), idParameter(request, 'id'), limit, cursor));
});
