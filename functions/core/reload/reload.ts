import { isOnline } from '#functions/core/agents/agents.ts';
import { type AgentRecord, listAgents } from '#functions/core/agents/agent-repository.ts';
import { count } from '#functions/core/observability/metrics.ts';
import { badRequest, type FieldError } from '#functions/core/errors.ts';
import { sendToFifoGroup } from '#functions/core/store/queues.ts';
import { flowCycleConflict, orderFlows } from '#functions/core/templates/bundle.ts';
import { loadResourcesOfType } from '#functions/core/templates/template-repository.ts';
import { findTenant, tenantInactive, tenantNotFound } from '#functions/core/tenants/tenant-repository.ts';
import type { StoredOf } from '#functions/core/templates/tenant-resources.ts';
import type { TenantRecord } from '#functions/core/tenants/tenant-repository.ts';
import { agentForConnection, type ReloadItem } from './plan.ts';

/** The body of a message on the reload queue: one load for one agent. */
export interface LoadMessage {
  batchId: string;
  deduplicationId: string;
  tenantId: number;
  agentId: number;
  flowId: number;
  context: string;
  requestedAt: string;
  /** The request id of the request that queued it (none from a schedule or a rollout): its run keeps it. */
  requestId?: string;
  /** The failed run this load retries (POST /tenant/runs/{id}/retry): its run keeps it. */
  retryOf?: number;
}

/** Spec 2.6 reload result. */
export interface ReloadResult {
  tokenId: number;
  tenantId: number;
  status: 'enqueued' | 'skipped_offline';
}

/** What POST /tenant/templates/reload answers per item: spec 2.6's result, then the item's flow and context, to match them by. */
export type ReloadItemResult = ReloadResult & Pick<ReloadItem, 'flowId' | 'context'>;

/**
 * Spec 4.5: validates every item first (400 listing the bad ones, nothing queued), then sends
 * each online agent its loads in flow dependency order on its own FIFO group; an offline agent's
 * loads are `skipped_offline` and the rest of the batch goes on. Results are in request order.
 * `requestId`, the id of the request asking (absent for a rollout's), goes with the loads to their runs.
 */
export async function requestReload(
  tenantId: number,
  items: readonly ReloadItem[],
  batchId: string,
  requestId?: string,
): Promise<ReloadItemResult[]> {
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

  const statuses = await queueLoads({ tenant, flows, agents }, items, batchId, requestId);
  return items.map((item, index) => ({
    tokenId: item.tokenId,
    tenantId,
    status: statuses[index] ?? 'skipped_offline',
    flowId: item.flowId,
    context: item.context,
  }));
}

/** What queueing loads needs to know of a tenant. */
export interface LoadTargets {
  tenant: TenantRecord;
  flows: readonly StoredOf<'flow'>[];
  agents: readonly AgentRecord[];
}

/**
 * Sends each online agent its loads (items already checked against `targets`) in flow dependency
 * order on its own FIFO group; an offline agent's loads are `skipped_offline`. The statuses come
 * back in the items' order. `batchId` makes the deduplication ids, so a batch sent twice within
 * SQS's 5-minute window is queued once (never the request id, which a caller may send twice: it
 * only travels along, to the runs). When the tenant's flows form a dependency cycle there is no
 * such order: 409 `flow_cycle` naming it, before anything is sent (applies refuse to make one, but
 * data from before they checked, or the mix an apply leaves while it writes or when it stopped
 * half-way, can hold one until an apply changes one of its flows).
 */
export async function queueLoads(
  targets: LoadTargets,
  items: ReadonlyArray<ReloadItem & Pick<LoadMessage, 'retryOf'>>,
  batchId: string,
  requestId?: string,
): Promise<Array<ReloadResult['status']>> {
  const { tenant, flows, agents } = targets;
  const tenantId = tenant.tenantId;
  const agentsById = new Map(agents.map((agent) => [agent.agentId, agent]));
  const order = orderFlows(flows);
  if ('cycles' in order) {
    throw flowCycleConflict(flows, order.cycles, {
      lead: "The tenant's flows cannot be put in dependency order, so nothing was queued: ",
      pointer: '/items',
    });
  }
  const position = new Map(order.ordered.map((flow, index) => [flow.id, index]));
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
            requestedAt,
            ...(requestId === undefined ? {} : { requestId }),
            ...(item.retryOf === undefined ? {} : { retryOf: item.retryOf }),
          };
          return { deduplicationId, body: load };
        }),
      );
    }
    for (const { index } of agentItems) statuses[index] = online ? 'enqueued' : 'skipped_offline';
    count(online ? 'ReloadEnqueued' : 'ReloadSkippedOffline', agentItems.length);
  }
  return items.map((_, index) => statuses[index] ?? 'skipped_offline');
}

/** A scheduled flow's outcome: a reload status, or why it could not be queued. */
export interface FlowStart {
  flowId: number;
  context: string;
  /** The agent that runs it (absent when the flow is gone). */
  tokenId?: number;
  status: ReloadResult['status'] | 'flow_not_found';
}

/** What starting a tenant's flows reads: its flows, connections and agents. */
export interface FlowTargets {
  flows: StoredOf<'flow'>[];
  connections: StoredOf<'connection'>[];
  agents: AgentRecord[];
}

export async function loadFlowTargets(tenantId: number): Promise<FlowTargets> {
  const [flows, connections, agents] = await Promise.all([
    loadResourcesOfType(tenantId, 'flow'),
    loadResourcesOfType(tenantId, 'connection'),
    listAgents(tenantId),
  ]);
  return { flows, connections, agents };
}

/**
 * Starts flows through the reload path for a schedule: each flow goes to the agent of its
 * connection, as the reload plan of an apply does. A flow the tenant no longer has is
 * `flow_not_found` (applies never remove flows: only data changed by hand meets it); the others are
 * queued. `targets` may be shared by
 * several schedules of one tenant (the dispatcher reads them once per tenant and tick).
 */
export async function startFlows(
  tenant: TenantRecord,
  requested: ReadonlyArray<{ flowId: number; context: string }>,
  batchId: string,
  targets: FlowTargets | Promise<FlowTargets> = loadFlowTargets(tenant.tenantId),
): Promise<FlowStart[]> {
  const { flows, connections, agents } = await targets;
  const flowsById = new Map(flows.map((flow) => [flow.id, flow]));
  const connectionsByKey = new Map(connections.map((connection) => [connection.key, connection]));
  const starts: FlowStart[] = requested.map(({ flowId, context }) => {
    const flow = flowsById.get(flowId);
    const agent = flow && agentForConnection(connectionsByKey.get(flow.connectionKey), agents);
    return agent
      ? { flowId, context, tokenId: agent.agentId, status: 'enqueued' }
      : { flowId, context, status: 'flow_not_found' };
  });
  const queueable = starts.filter((start): start is FlowStart & { tokenId: number } => start.tokenId !== undefined);
  const statuses = await queueLoads({ tenant, flows, agents }, queueable, batchId);
  queueable.forEach((start, index) => {
    start.status = statuses[index] ?? 'skipped_offline';
  });
  return starts;
}
