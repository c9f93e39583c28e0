/**
 * Migration 5: every count kept. Earlier versions started a quota's count only when a write first
 * needed it (counting the items then, for data written before the quota), and a tenant's agents
 * from before their names were claimed had neither their count (`AGENTCOUNT`) nor their name
 * claims until its next agent. For every tenant (deleted ones too: a sweep left by a user's or a
 * group's deletion still takes memberships off its count) and every client, each count that does
 * not exist is started from the items it counts, read as that first write read them, and only
 * while it still does not exist (the release before this one still starts counts itself, the same
 * way); a tenant's agents get their count and their name claims in one commit. From then on a
 * count that does not exist counts nothing (store/counts.ts).
 *
 * Which counts exist is not on the tenant's or the client's record, so the filter selects every
 * one of those records; for one whose counts all exist, the migration reads them and writes nothing.
 */
import { startAgentCount } from '#functions/core/agents/agent-repository.ts';
import type { ClientRecord } from '#functions/core/clients/client-repository.ts';
import { type CountKey, startCount } from '#functions/core/store/counts.ts';
import { getItem, queryAll } from '#functions/core/store/dynamo.ts';
import * as stored from '#functions/core/store/entity-declarations.ts';
import type { Migration } from '#functions/core/store/migrations.ts';
import type { IndexName } from '#functions/core/store/table-definition.ts';
import type { TenantRecord } from '#functions/core/tenants/tenant-repository.ts';

/** How many items a partition of the table (a consistent Query) or of an index holds under `prefix`. */
async function itemsIn(partition: string, prefix: string, index?: IndexName): Promise<number> {
  return (await queryAll<{ pk: string }>(partition, prefix, { projection: 'pk', index })).length;
}

/**
 * What each of a tenant's counts counts. The datamarts are counted from the tenant's index of them,
 * the only list there is (eventually consistent: a datamart written or deleted since counts were
 * kept went through the count, which then exists).
 */
const tenantCounts: Record<string, (tenantId: number) => Promise<number>> = {
  USERS: (tenantId) => itemsIn(stored.user.partition({ tenantId }), stored.user.keyPrefix({})),
  GROUPS: (tenantId) => itemsIn(stored.group.partition({ tenantId }), stored.group.keyPrefix({})),
  MEMBERSHIPS: (tenantId) => itemsIn(stored.membership.partition({ tenantId }), stored.membership.keyPrefix({})),
  DATAMARTS: (tenantId) => itemsIn(stored.datamart.indexes.gsi1.partition({ tenantId }), '', 'gsi1'),
  ALERTS: (tenantId) => itemsIn(stored.alert.partition({ tenantId }), stored.alert.keyPrefix({})),
  SCHEDULES: (tenantId) => itemsIn(stored.schedule.partition({ tenantId }), stored.schedule.keyPrefix({})),
};

/** What each of a client's counts counts: its live tenants as its index of them lists them (a deletion takes the tenant off it). */
const clientCounts: Record<string, (clientId: number) => Promise<number>> = {
  TENANTS: (clientId) => itemsIn(stored.tenant.indexes.gsi1.partition({ clientId }), '', 'gsi1'),
  TEMPLATES: (clientId) => itemsIn(stored.template.partition({ clientId }), stored.template.keyPrefix({})),
};

/** Starts the count from what it counts, unless it exists (a count that exists is right: every write since kept it). */
async function keep(key: CountKey, counted: () => Promise<number>): Promise<void> {
  if (await getItem(key)) return;
  await startCount(key, await counted());
}

async function keepTenantCounts(tenantId: number): Promise<void> {
  for (const [name, counted] of Object.entries(tenantCounts)) {
    await keep(stored.tenantCount.key({ tenantId, name }), () => counted(tenantId));
  }
  const agentCount = stored.agentCount.key({ tenantId });
  if ((await getItem(agentCount)) || (await startAgentCount(tenantId)) || (await getItem(agentCount))) return;
  // No version writes a name claim without the count: left as it is, the count would be wrong.
  throw new Error(`Tenant ${tenantId} has an agent name claimed but no agent count: its agents need a look`);
}

async function keepClientCounts(clientId: number): Promise<void> {
  for (const [name, counted] of Object.entries(clientCounts)) {
    await keep(stored.clientCount.key({ clientId, name }), () => counted(clientId));
  }
}

const tenantSk = stored.tenant.keyPrefix({});

export const countsKept: Migration = {
  version: 5,
  name: 'counts-kept',
  selects: [{ entity: stored.tenant }, { entity: stored.client }],
  async migrate(item) {
    if (item.sk === tenantSk) await keepTenantCounts((item as unknown as TenantRecord).tenantId);
    else await keepClientCounts((item as unknown as ClientRecord).clientId);
  },
};
