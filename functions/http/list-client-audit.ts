import { httpHandler, optionalIntegerQueryParameter, pageParameters } from '#functions/core/api/http-handler.ts';
import { auditFilterOf, auditPageResponse } from '#functions/core/audit/audit-request.ts';
import { listClientAgentAudit, listClientAudit } from '#functions/core/audit/audit-trail.ts';
import { clientIdOf } from '#functions/core/auth/principals.ts';
import { badRequest } from '#functions/core/errors.ts';

export const handler = httpHandler(async (request) => {
  const { limit, cursor } = pageParameters(request);
  const clientId = clientIdOf(request.principal);
  const tenantId = optionalIntegerQueryParameter(request, 'tenantId');
  const agentId = optionalIntegerQueryParameter(request, 'agent');
  const filter = auditFilterOf(request);
  if (agentId === undefined)
    return auditPageResponse(request, await listClientAudit(clientId, { ...filter, tenantId }, limit, cursor));
  if (tenantId === undefined) {
    const rule = 'needs tenantId: an agent is one of a tenant';
    throw badRequest(
      `Query parameter agent ${rule}`,
      [{ location: 'query', pointer: '/agent', message: rule }],
      'invalid_query_parameter',
    );
  }
  return auditPageResponse(request, await listClientAgentAudit(clientId, tenantId, agentId, filter, limit, cursor));
});
