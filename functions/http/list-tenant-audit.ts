import { httpHandler, optionalIntegerQueryParameter, pageParameters } from '#functions/core/api/http-handler.ts';
import { auditFilterOf, auditPageResponse } from '#functions/core/audit/audit-request.ts';
import { listTenantAudit } from '#functions/core/audit/audit-trail.ts';
import { tenantIdOf } from '#functions/core/auth/principals.ts';

export const handler = httpHandler(async (request) => {
  const { limit, cursor } = pageParameters(request);
  const agentId = optionalIntegerQueryParameter(request, 'agent');
  const page = await listTenantAudit(tenantIdOf(request.principal), agentId, auditFilterOf(request), limit, cursor);
  return auditPageResponse(request, page);
});
