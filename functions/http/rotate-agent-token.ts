import { httpHandler, idParameter } from '#functions/core/api/http-handler.ts';
import { tenantIdOf } from '#functions/core/auth/principals.ts';
import { rotateAgentToken } from '#functions/core/agents/agents.ts';

/** A new token for one of the tenant's agents (how the default agent's token is obtained). */
export const handler = httpHandler(async (request) => ({
  status: 200,
  body: { status: 'success', data: await rotateAgentToken(tenantIdOf(request.principal), idParameter(request, 'id')) },
}));
