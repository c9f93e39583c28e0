import { httpHandler } from '#functions/core/api/http-handler.ts';
import createAgentSchema from '#functions/core/api/validators/create-agent.cjs';
import { tenantOf } from '#functions/core/auth/principals.ts';
import { type AgentCreated, createAgent } from '#functions/core/agents/agents.ts';

const created = (agent: AgentCreated) => ({ status: 201, body: { status: 'success', data: agent } });

/** The new agent's token is in this answer only. */
export const handler = httpHandler(
  async ({ principal, body, idempotency }) => {
    const { tenantId, clientId } = tenantOf(principal);
    return created(await createAgent(tenantId, clientId, body.nome, idempotency.resumable(created)));
  },
  { body: createAgentSchema },
);
