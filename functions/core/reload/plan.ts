import type { AgentRecord } from '#functions/core/agents/agent-repository.ts';
import type { ReloadBody } from '#functions/core/api/validators/reload.cjs';
import { flowDependencyOrder } from '#functions/core/templates/bundle.ts';
import { defaultAgentSlot, type StoredOf } from '#functions/core/templates/tenant-resources.ts';

/** Spec 2.6: one load to queue. `tokenId` is the id of the agent that runs it. */
export type ReloadItem = ReloadBody['items'][number];

/**
 * The agent that runs a connection's flows: the tenant's agent named like the connection's slot,
 * else the default agent (a template names slots, a tenant decides which agents fill them).
 */
export function agentForConnection(
  connection: StoredOf<'connection'> | undefined,
  agents: readonly AgentRecord[],
): AgentRecord | undefined {
  const slot = connection?.agent ?? defaultAgentSlot;
  return agents.find((agent) => agent.nome === slot && !agent.isDefault) ?? agents.find((agent) => agent.isDefault);
}

/**
 * The reload plan after an apply: the flows that write any of `tables`, in dependency order, as
 * reload items (so `{"items": plan}` is a valid reload body).
 */
export function reloadPlan(
  tables: ReadonlySet<string>,
  flows: readonly StoredOf<'flow'>[],
  connections: readonly StoredOf<'connection'>[],
  agents: readonly AgentRecord[],
): ReloadItem[] {
  const connectionsByKey = new Map(connections.map((connection) => [connection.key, connection]));
  return flowDependencyOrder(flows)
    .filter((flow) => flow.writes.some((table) => tables.has(table)))
    .map((flow) => {
      const agent = agentForConnection(connectionsByKey.get(flow.connectionKey), agents);
      if (!agent) throw new Error(`Tenant ${flow.tenantId} has no agent to run flow ${flow.key}`);
      return { flowId: flow.id, tokenId: agent.agentId, context: flow.context };
    });
}
