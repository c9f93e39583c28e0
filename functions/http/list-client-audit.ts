import { httpHandler, integerQueryParameter, pageParameters, queryParameter } from '#functions/core/api/http-handler.ts';
import { auditFilterOf, auditPageResponse } from '#functions/core/audit/audit-request.ts';
import { listClientAudit } from '#functions/core/audit/audit-trail.ts';
import { clientIdOf } from '#functions/core/auth/principals.ts';

export const handler = httpHandler(async (request) => {
  const { limit, cursor } = pageParameters(request);
  const tenantId = queryParameter(request, 'tenantId') === undefined ? undefined : integerQueryParameter(request, 'tenantId');
  const filter = { ...auditFilterOf(request), tenantId };
  return auditPageResponse(request, await listClientAudit(clientIdOf(request.principal), filter, limit, cursor));
});
