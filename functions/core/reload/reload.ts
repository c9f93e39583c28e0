import { isOnline, listAgents } from '../agents/agents.ts';
import { badRequest, type FieldError } from '../errors.ts';
import { sendToFifoGroup } from '../store/queues.ts';
import { flowDependencyOrder } from '../templates/bundle.ts';
import { loadResourcesOfType } from '../templates/tenant-resources.ts';
import { findTenant, tenantInactive, tenantNotFound } from '../tenants/tenant-repository.ts';
import type { ReloadItem } from './plan.ts';

/** The body of a message on the reload queue: one load for one agent. */
export interface LoadMessage {
  batchId: string;
  deduplicationId: string;
  tenantId: number;
  agentId: number;
  flowId: number;
  context: string;
  /** The tenant's development_variables when the load was requested: they travel with it. */
  variables: Record<string, string | number | boolean>;
  requestedAt: string;
}

/** Spec 2.6 reload result. */
export interface ReloadResult {
  tokenId: number;
  tenantId: number;
  status: 'enqueued' | 'skipped_offline';
}

/**
 * Spec 4.5: validates every item first (400 listing the bad ones, nothing queued), then sends
 * each online agent its loads in flow dependency order on its own FIFO group; an offline agent's
 * loads are `skipped_offline` and the rest of the batch goes on. Results are in request order.
 */
export async function requestReload(tenantId: number, items: readonly ReloadItem[], batchId: string): Promise<ReloadResult[]> {
  const [tenant, flows, agents] = await Promise.all([
    findTenant(tenantId),
    loadResourcesOfType(tenantId, 'flow'),
    listAgents(tenantId),
  ]);
  if (!tenant || tenant.deletedAt) throw tenantNotFound();
  if (!tenant.ativo) throw tenantInactive();

  const flowsById = new Map(flows.map((flow) => [flow.id, flow]));
  const agentsById = new Map(agents.map((agent) => [agent.agentId, agent]));
  const errors: FieldError[] = items.flatMap((item, index) => [
    ...(flowsById.has(item.flowId)
      ? []
      : [{ location: 'body' as const, pointer: `/items/${index}/flowId`, message: 'is not a flow of this tenant' }]),
    ...(agentsById.has(item.tokenId)
      ? []
      : [{ location: 'body' as const, pointer: `/items/${index}/tokenId`, message: 'is not an agent of this tenant' }]),
  ]);
  const [first] = errors;
  if (first)
    throw badRequest(
      `Invalid reload items: ${first.pointer} ${first.message}; nothing was queued`,
      errors,
      'invalid_reload_items',
    );

  const position = new Map(flowDependencyOrder(flows).map((flow, index) => [flow.id, index]));
  const inDependencyOrder = items
    .map((item, index) => ({ item, index }))
    .sort((a, b) => (position.get(a.item.flowId) ?? 0) - (position.get(b.item.flowId) ?? 0) || a.index - b.index);

  const now = Date.now();
  const requestedAt = new Date(now).toISOString();
  const statuses = new Array<ReloadResult['status']>(items.length);
  // Map keeps first-insertion order, and each agent's list keeps dependency order.
  const byAgent = new Map<number, typeof inDependencyOrder>();
  for (const entry of inDependencyOrder) byAgent.set(entry.item.tokenId, [...(byAgent.get(entry.item.tokenId) ?? []), entry]);
  for (const [agentId, agentItems] of byAgent) {
    const online = isOnline(agentsById.get(agentId) ?? {}, now);
    if (online) {
      await sendToFifoGroup(
        'reload',
        `tenant-${tenantId}-agent-${agentId}`,
        agentItems.map(({ item }) => {
          const deduplicationId = `${batchId}-${item.flowId}`;
          const load: LoadMessage = {
            batchId,
            deduplicationId,
            tenantId,
            agentId,
            flowId: item.flowId,
            context: item.context,
            variables: tenant.developmentVariables,
            requestedAt,
          };
          return { deduplicationId, body: load };
        }),
      );
    }
    for (const { index } of agentItems) statuses[index] = online ? 'enqueued' : 'skipped_offline';
  }
  return items.map((item, index) => ({ tokenId: item.tokenId, tenantId, status: statuses[index] ?? 'skipped_offline' }));
}
