import { httpHandler, idParameter } from '#functions/core/api/http-handler.ts';
import { optionalBody } from '#functions/core/api/validation.ts';
import rotateTokenSchema from '#functions/core/api/validators/rotate-token.cjs';
import { tenantIdOf } from '#functions/core/auth/principals.ts';
import { rotateAgentToken } from '#functions/core/agents/agents.ts';

/**
 * A new token for one of the tenant's agents (how the default agent's token is obtained). The body may
 * be left out, as before the route took one: the previous token then works for a day.
 */
export const handler = httpHandler(
  async (request) => {
    const { previousValidForSeconds } = optionalBody(rotateTokenSchema, request.body, {});
    const rotated = await rotateAgentToken(tenantIdOf(request.principal), idParameter(request, 'id'), previousValidForSeconds);
    return { status: 200, body: { status: 'success', data: rotated } };
  },
  { body: rotateTokenSchema, validatedByHandler: true },
);
