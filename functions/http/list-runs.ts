import {
  enumQueryParameter,
  httpHandler,
  integerQueryParameter,
  pageParameters,
  pageResponse,
  queryParameter,
} from '#functions/core/api/http-handler.ts';
import { tenantIdOf } from '#functions/core/auth/principals.ts';
import type { RunStatus } from '#functions/core/reload/run-repository.ts';
import { listRuns } from '#functions/core/reload/runs.ts';

export const handler = httpHandler(async (request) => {
  const { limit, cursor } = pageParameters(request);
  // Ids without a default: absent is no filter.
  const id = (name: string) => (queryParameter(request, name) === undefined ? undefined : integerQueryParameter(request, name));
  const filter = { status: enumQueryParameter<RunStatus>(request, 'status'), agentId: id('agent'), flowId: id('flowId') };
  return pageResponse(await listRuns(tenantIdOf(request.principal), filter, limit, cursor));
});
