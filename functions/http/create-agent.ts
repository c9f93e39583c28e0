import { httpHandler } from '#functions/core/api/http-handler.ts';
import createAgentSchema from '#functions/core/api/validators/create-agent.cjs';
import { tenantOf } from '#functions/core/auth/principals.ts';
import { createAgent } from '#functions/core/agents/agents.ts';

/** The new agent's token is in this answer only. */
export const handler = httpHandler(
  async ({ principal, body }) => {
    const { tenantId, clientId } = tenantOf(principal);
    return { status: 201, body: { status: 'success', data: await createAgent(tenantId, clientId, body.nome) } };
  },
  { body: createAgentSchema },
);
