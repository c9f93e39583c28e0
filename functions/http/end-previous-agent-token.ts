import { httpHandler, idParameter } from '#functions/core/api/http-handler.ts';
import { tenantIdOf } from '#functions/core/auth/principals.ts';
import { endPreviousAgentToken } from '#functions/core/agents/agents.ts';

/** Ends the agent token the last rotation kept working; none left is a success too (`ended: false`). */
export const handler = httpHandler(async (request) => ({
  status: 200,
  body: { status: 'success', data: await endPreviousAgentToken(tenantIdOf(request.principal), idParameter(request, 'id')) },
}));
