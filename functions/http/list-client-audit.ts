import { httpHandler, pageParameters } from '#functions/core/api/http-handler.ts';
import { auditFilterOf, auditPageResponse, clientAuditChainOf } from '#functions/core/audit/audit-request.ts';
import { listClientAgentAudit, listClientAudit } from '#functions/core/audit/audit-trail.ts';
import { clientIdOf } from '#functions/core/auth/principals.ts';

export const handler = httpHandler(async (request) => {
  const { limit, cursor } = pageParameters(request);
  const clientId = clientIdOf(request.principal);
  const { tenantId, agentId } = clientAuditChainOf(request);
  const filter = auditFilterOf(request);
  const page =
    agentId === undefined
      ? await listClientAudit(clientId, { ...filter, tenantId }, limit, cursor)
      : await listClientAgentAudit(clientId, tenantId, agentId, filter, limit, cursor);
  return auditPageResponse(request, page);
});
