import { enumQueryParameter, httpHandler, idParameter, pageParameters, pageResponse } from '#functions/core/api/http-handler.ts';
import { clientIdOf } from '#functions/core/auth/principals.ts';
import type { Outcome } from '#functions/core/rollouts/rollout-repository.ts';
import { listRolloutTenants } from '#functions/core/rollouts/rollouts.ts';

export const handler = httpHandler(async (request) => {
  const { limit, cursor } = pageParameters(request);
  const page = await listRolloutTenants(
    clientIdOf(request.principal),
    idParameter(request, 'id'),
    idParameter(request, 'rolloutId'),
    enumQueryParameter<Outcome>(request, 'outcome'),
    limit,
    cursor,
  );
  return pageResponse(page);
});
