import { httpHandler } from '../core/api/http-handler.ts';
import createAgentSchema from '../core/api/validators/create-agent.cjs';
import { tenantOf } from '../core/auth/principals.ts';
import { createAgent } from '../core/agents/agents.ts';

/** The new agent's token is in this answer only. */
export const handler = httpHandler(
  async ({ principal, body }) => {
    const { tenantId, clientId } = tenantOf(principal);
    return { status: 201, body: { status: 'success', data: await createAgent(tenantId, clientId, body.nome) } };
  },
  { body: createAgentSchema },
);
