/**
 * What the writing operations cost as their size grows: DynamoDB requests, their depth (levels of
 * requests that waited for one another) and time, for creating a tenant, applying a template (50,
 * 500, 5,000 resources, against its floor), reloading and an agent's reports on the runs, and changing
 * datamarts and permissions on a tenant with 1x and 100x data.
 */
import type { Twin } from '#local/twin.ts';
import { type ApiCall, type ScaledTenant, scaledTenant, until } from './read-data.ts';
import { levelsOf, recordRequests, type RecordedRequest } from './request-replay.ts';
import { median } from './round-trips.ts';
import { itemBytes } from './item-sizes.ts';
import { fixed, markdownTable, measuredAt, ratio } from './table.ts';
import { benchBundle } from './templates.ts';
import { callTwin } from './twin-api.ts';
import { tablePermission } from '#test/support/permissions.ts';

/** An apply may send at most this many times its floor's requests. */
export const applyFloorRatio = 1.5;
export const applySizes = [50, 500, 5000] as const;

export interface WriteRow {
  operation: string;
  size: string;
  requests: number;
  depth: number;
  medianMs: number;
  /** The fewest requests the operation can make, where stated. */
  floor?: number;
  /** The items its audit record took (the record, its chain's head, an idempotent request's marker) and their write units. */
  audit: { items: number; writeUnits: number };
}

type AttributeValue = {
  S?: string;
  N?: string;
  BOOL?: boolean;
  NULL?: boolean;
  M?: Record<string, AttributeValue>;
  L?: AttributeValue[];
  SS?: string[];
};

/** A value as the document client gives it, from DynamoDB's attribute-value form (the recorded requests'). */
function nativeOf(value: AttributeValue): unknown {
  if (value.S !== undefined) return value.S;
  if (value.N !== undefined) return Number(value.N);
  if (value.BOOL !== undefined) return value.BOOL;
  if (value.M !== undefined) return Object.fromEntries(Object.entries(value.M).map(([name, entry]) => [name, nativeOf(entry)]));
  if (value.L !== undefined) return value.L.map(nativeOf);
  if (value.SS !== undefined) return new Set(value.SS);
  return null;
}

/**
 * What the audit record cost the operation, by DynamoDB's rules: each item of a transaction 2 WRU per
 * started KB, and the record's index entry 1 per started KB (the head's update and the marker are
 * well under 1 KB).
 */
function auditCost(requests: readonly RecordedRequest[]): WriteRow['audit'] {
  const cost = { items: 0, writeUnits: 0 };
  for (const request of requests) {
    if (request.command !== 'TransactWriteItemsCommand') continue;
    const items = (
      request.input as {
        TransactItems: Array<{
          Put?: { Item: Record<string, AttributeValue> };
          Update?: { Key: Record<string, AttributeValue> };
        }>;
      }
    ).TransactItems;
    for (const item of items) {
      const key = item.Put?.Item ?? item.Update?.Key;
      if (!String(key?.pk?.S).startsWith('AUDIT')) continue;
      cost.items += 1;
      const units = item.Put
        ? Math.ceil(
            itemBytes(Object.fromEntries(Object.entries(item.Put.Item).map(([name, value]) => [name, nativeOf(value)]))) / 1024,
          )
        : 1;
      cost.writeUnits += 2 * units + (item.Put?.Item.gsi1pk ? units : 0);
    }
  }
  return cost;
}

/** A DynamoDB Query of the tenant's template resources (one per page of them). */
const readsResources = (request: RecordedRequest) => {
  const values = (request.input as { ExpressionAttributeValues?: Record<string, { S?: string }> }).ExpressionAttributeValues;
  return request.command === 'QueryCommand' && values?.[':prefix']?.S === 'R#';
};

/**
 * The floor of an apply that writes `written` resources over a tenant whose resources take
 * `resourcePages` Query pages: the token lookup; the tenant and its journal (one batch read); the
 * template's latest version; the tenant's resources; its agents; the lock (which gives the new
 * ids); the resources, 25 a batch write (a transaction takes 100, at twice the write cost, and
 * all-or-nothing is not what an apply of thousands needs); the closing transaction.
 */
export const applyFloor = (written: number, resourcePages: number) => 6 + resourcePages + Math.ceil(written / 25);

/** Runs `operation` `runs` times (`prepare` before each, not measured): requests and depth of the first, median time. */
async function measured(
  runs: number,
  operation: (run: number) => Promise<unknown>,
  prepare: (run: number) => Promise<unknown> = async () => undefined,
): Promise<{ requests: RecordedRequest[]; depth: number; medianMs: number }> {
  const times: number[] = [];
  let first: RecordedRequest[] | undefined;
  for (let run = 0; run < runs; run++) {
    await prepare(run);
    const started = performance.now();
    const recorded = await recordRequests(() => operation(run));
    times.push(performance.now() - started);
    first ??= recorded;
  }
  const requests = first ?? [];
  return { requests, depth: levelsOf(requests).length, medianMs: median(times) };
}

const row = (operation: string, size: string, result: Awaited<ReturnType<typeof measured>>, floor?: number): WriteRow => ({
  operation,
  size,
  requests: result.requests.length,
  depth: result.depth,
  medianMs: result.medianMs,
  ...(floor === undefined ? {} : { floor }),
  audit: auditCost(result.requests),
});

/**
 * Measures the writes on a twin started in this process; `tenants` are scaled tenants (1x and 100x
 * data) whose datamarts and permissions are changed, made here when not given.
 */
export async function measureWrites(
  twin: Pick<Twin, 'url' | 'clientToken'>,
  tenants: readonly ScaledTenant[] | undefined,
  progress: (message: string) => void = () => undefined,
): Promise<WriteRow[]> {
  const call: ApiCall = (method, path, token, body) => callTwin(twin, method, path, token, body);
  const client = twin.clientToken;
  const runs = 3;
  const rows: WriteRow[] = [];
  const newTenant = async (body: Record<string, unknown> = {}) =>
    (await call('POST', '/tenants', client, { nome: 'Bench writes', ativo: true, ...body })).data.token as string;

  progress('  writes: tenants and template applies...');
  rows.push(row('create tenant', '—', await measured(runs, () => newTenant())));
  let reloading: { token: string; plan: unknown[] } | undefined;
  for (const size of applySizes) {
    const templateId = (await call('POST', '/tenants/templates', client, benchBundle(size + 1))).data.id as number;
    const withTemplate = await measured(runs, () => newTenant({ templateId }));
    rows.push(row('create tenant with a template (applied at once)', `${size} resources`, withTemplate));
    const tokens: string[] = [];
    const first = await measured(
      runs,
      async (run) => {
        const plan = (await call('POST', '/tenant/templates/apply', tokens[run] as string, { templateId }))
          .reloadPlan as unknown[];
        reloading ??= { token: tokens[run] as string, plan };
        if (plan.length > reloading.plan.length) reloading = { token: tokens[run] as string, plan };
      },
      async (run) => {
        tokens[run] = await newTenant();
      },
    );
    const pages = (result: typeof first) => result.requests.filter(readsResources).length;
    rows.push(row('apply (first)', `${size} resources`, first, applyFloor(size + 1, pages(first))));
    const again = await measured(runs, (run) => call('POST', '/tenant/templates/apply', tokens[run] as string, { templateId }));
    rows.push(row('apply again, nothing changed', `${size} resources`, again, applyFloor(0, pages(again))));
  }

  const scaled = tenants ?? [await scaledTenant(call, client, 1), await scaledTenant(call, client, 100)];
  for (const data of scaled) {
    progress(`  writes: datamarts and permissions at ${data.scale}x data...`);
    const token = data.tenantToken;
    const size = `${data.scale}x data`;
    const own = (await call('GET', `/tenant/datamart/${data.ids.datamart}`, token)).data as {
      dm_tables: Array<{ tableId: number }>;
    };
    const tables = own.dm_tables.map((entry) => entry.tableId);
    const created: number[] = [];
    rows.push(
      row(
        'create datamart',
        size,
        await measured(runs, async (run) => {
          created[run] = (
            await call('POST', '/tenant/datamart', token, { nome: `New ${run}`, tables, owners: [data.ids.user] })
          ).data.id;
        }),
      ),
    );
    rows.push(
      row(
        'rename datamart',
        size,
        await measured(runs, (run) => call('PATCH', `/tenant/datamart/${created[run]}`, token, { nome: `Renamed ${run}` })),
      ),
    );
    const records = tables.map((tableId) => tablePermission(tableId));
    rows.push(
      row(
        "replace a user's permissions (one per table)",
        size,
        await measured(runs, (run) =>
          call('PUT', `/tenant/datamart/${created[run]}/user/${data.ids.user}`, token, { permissions: records }),
        ),
      ),
    );
    rows.push(
      row(
        "replace a group's permissions (one per table)",
        size,
        await measured(runs, (run) =>
          call('PUT', `/tenant/datamart/${created[run]}/group/${data.ids.group}`, token, { permissions: records }),
        ),
      ),
    );
    rows.push(
      row(
        'take a table out of a datamart (its records go)',
        size,
        await measured(runs, (run) => call('PATCH', `/tenant/datamart/${created[run]}`, token, { tables: tables.slice(1) })),
      ),
    );
    rows.push(
      row(
        "remove a user's permissions",
        size,
        await measured(runs, (run) => call('DELETE', `/tenant/datamart/${created[run]}/user/${data.ids.user}`, token)),
      ),
    );
    rows.push(
      row('delete datamart', size, await measured(runs, (run) => call('DELETE', `/tenant/datamart/${created[run]}`, token))),
    );
  }

  if (reloading) {
    progress('  writes: reloads...');
    const { token, plan } = reloading;
    const agent = (await call('POST', '/tenant/agents/1/token', token)).data.token as string;
    await call('POST', '/agent/heartbeat', agent);
    for (const items of [5, 50, 500]) {
      const result = await measured(runs, () => call('POST', '/tenant/templates/reload', token, { items: plan.slice(0, items) }));
      rows.push(row('reload (one agent)', `${items} items`, result));
    }
    // The agent's reports on the runs those reloads made: each run's update and its record in the agent's chain.
    const waiting = await until(async () => {
      const listed = (await call('GET', `/tenant/runs?status=dispatched&limit=${runs}`, token)).data as Array<{ id: number }>;
      return listed.length === runs ? listed.map((run) => run.id) : undefined;
    });
    const report = (status: string) => (run: number) => call('POST', `/agent/runs/${waiting[run]}`, agent, { status });
    rows.push(row('report a run (agent): running', '—', await measured(runs, report('running'))));
    rows.push(row('report a run (agent): succeeded', '—', await measured(runs, report('succeeded'))));
  }
  return rows;
}

const withinFloor = (written: WriteRow) => written.floor === undefined || written.requests <= written.floor * applyFloorRatio;

/** The Budgets table's row for the writes. */
export function writeBudgetRows(rows: readonly WriteRow[]): Array<[string, boolean, string]> {
  const applies = rows.filter((written) => written.floor !== undefined);
  return [
    [
      `template apply within ${applyFloorRatio}x of its floor's requests at ${applySizes.map((size) => size.toLocaleString('en')).join(', ')} resources`,
      applies.every(withinFloor),
      applies
        .filter((written) => !withinFloor(written))
        .map((written) => `${written.operation} ${written.size} ${ratio(written.requests, written.floor ?? Number.NaN)}`)
        .join(', '),
    ],
  ];
}

export const writesHeading = '## Writes: requests and depth against size';

/** The section of bench/results.md. */
export function writeSection(rows: readonly WriteRow[]): string {
  return [
    `${writesHeading}\n\n${measuredAt()} Each operation over HTTP on the twin, 3 times: DynamoDB requests and depth (levels of requests that waited for one another, the token lookup's included) of the first, median time. Applies use bench/templates.ts's bundles (desks, tables of 10 columns, flows in chains, applications, dashboards); the floor is what any apply must send (bench/write-costs.ts, applyFloor), its writes 25 a batch. Datamart and permission changes are on the tenants of the read budget (1x and 100x data). The audit columns are what each change's audit record adds to its transaction (the record, its chain's head, an idempotent request's marker: docs/operations.md, Audit trail) and their write units by DynamoDB's rules. \`npm run bench -- writes\` measures this section alone and rewrites only it.`,
    markdownTable(
      ['operation', 'size', 'requests', 'depth', 'median ms', 'audit items', 'audit WRU', 'floor', 'vs floor', 'budget'],
      rows.map((written) => [
        written.operation,
        written.size,
        written.requests,
        written.depth,
        fixed(written.medianMs, 1),
        written.audit.items,
        written.audit.writeUnits,
        written.floor ?? '',
        written.floor === undefined ? '' : ratio(written.requests, written.floor),
        written.floor === undefined ? '' : withinFloor(written) ? 'pass' : '**FAIL**',
      ]),
    ),
  ].join('\n\n');
}
