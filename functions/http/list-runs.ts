import {
  enumQueryParameter,
  httpHandler,
  optionalIntegerQueryParameter,
  pageParameters,
  pageResponse,
} from '#functions/core/api/http-handler.ts';
import { tenantIdOf } from '#functions/core/auth/principals.ts';
import type { RunStatus } from '#functions/core/reload/run-repository.ts';
import { listRuns } from '#functions/core/reload/runs.ts';

export const handler = httpHandler(async (request) => {
  const { limit, cursor } = pageParameters(request);
  const filter = {
    status: enumQueryParameter<RunStatus>(request, 'status'),
    agentId: optionalIntegerQueryParameter(request, 'agent'),
    flowId: optionalIntegerQueryParameter(request, 'flowId'),
  };
  return pageResponse(await listRuns(tenantIdOf(request.principal), filter, limit, cursor));
});
