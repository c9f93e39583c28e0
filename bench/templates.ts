/**
 * Template apply and reload on the local twin: wall time and DynamoDB round trips per operation.
 * The twin runs in this process, so a middleware on its DynamoDB client counts every request.
 */
import type { TemplateBundle } from '#functions/core/templates/bundle.ts';
import type { Twin } from '#local/twin.ts';
import { callTwin } from './twin-api.ts';
import { countingRoundTrips, median, type Sample } from './round-trips.ts';

export interface OperationResult {
  operation: string;
  runs: number;
  medianMs: number;
  maxMs: number;
  /** DynamoDB requests of one operation (the median run's). */
  roundTrips: number;
}

/**
 * `count` resources: desks, tables, flows, applications and dashboards in equal parts, plus one
 * connection; flows form chains of ten (each reads the previous table), so ordering matters.
 */
export function benchBundle(count: number, columnsPerTable = 10): TemplateBundle {
  const perType = Math.floor((count - 1) / 5);
  const indexes = Array.from({ length: perType }, (_, index) => index);
  return {
    nome: `Bench ${count}`,
    connections: [{ key: 'db', nome: 'DB', kind: 'postgres' }],
    desks: indexes.map((index) => ({ key: `desk-${index}`, nome: `Desk ${index}` })),
    tables: indexes.map((index) => ({
      key: `table-${index}`,
      nome: `Table ${index}`,
      desk: `desk-${index}`,
      columns: Array.from({ length: columnsPerTable }, (_, column) => ({
        column_name: `c${column}`,
        data_type: 'text',
        label: `Column ${column}`,
      })),
    })),
    flows: indexes.map((index) => ({
      key: `flow-${index}`,
      nome: `Flow ${index}`,
      connection: 'db',
      reads: index % 10 === 0 ? [] : [`table-${index - 1}`],
      writes: [`table-${index}`],
      context: 'full',
    })),
    applications: indexes.map((index) => ({ key: `app-${index}`, nome: `App ${index}`, route: `/apps/${index}` })),
    dashboards: indexes.map((index) => ({
      key: `dash-${index}`,
      nome: `Dashboard ${index}`,
      widgets: [{ key: 'w', nome: 'W', kind: 'chart', table: `table-${index}` }],
    })),
  };
}

/** Runs against a twin started in this process (its DynamoDB client is this module's `db()`). */
export async function measureTemplateOperations(
  twin: Pick<Twin, 'url' | 'clientToken'>,
  options: { resources: number; reloadItems: number; runs: number },
): Promise<OperationResult[]> {
  const call = (method: string, path: string, token: string, body?: unknown) => callTwin(twin, method, path, token, body);
  return countingRoundTrips(async (measure) => {
    const published = (await call('POST', '/tenants/templates', twin.clientToken, benchBundle(options.resources))) as {
      data: { id: number };
    };
    const templateId = published.data.id;
    const samples: Record<string, Sample[]> = {};
    const record = (name: string, sample: Sample) => {
      samples[name] = [...(samples[name] ?? []), sample];
    };
    for (let run = 0; run < options.runs; run++) {
      const tenant = (await call('POST', '/tenants', twin.clientToken, { nome: `Bench ${run}`, ativo: true })) as {
        data: { token: string };
      };
      const tenantToken = tenant.data.token;
      let plan: Array<{ flowId: number; tokenId: number; context: string }> = [];
      record(
        `first apply (${options.resources} resources)`,
        await measure(async () => {
          plan = ((await call('POST', '/tenant/templates/apply', tenantToken, { templateId })) as { reloadPlan: typeof plan })
            .reloadPlan;
        }),
      );
      record(
        `re-apply, nothing changed`,
        await measure(() => call('POST', '/tenant/templates/apply', tenantToken, { templateId })),
      );
      const agent = (await call('POST', '/tenant/agents/1/token', tenantToken)) as { data: { token: string } };
      await call('POST', '/agent/heartbeat', agent.data.token);
      const items = plan.slice(0, options.reloadItems);
      record(
        `reload (${items.length} items, one agent)`,
        await measure(() => call('POST', '/tenant/templates/reload', tenantToken, { items })),
      );
    }
    // GET /tenant/datamart over 20 datamarts of 50 tables of 20 columns each (issue 5's bench).
    const dataTemplate = (await call('POST', '/tenants/templates', twin.clientToken, benchBundle(251, 20))) as {
      data: { id: number };
    };
    const dataTenant = (await call('POST', '/tenants', twin.clientToken, {
      nome: 'Bench datamarts',
      ativo: true,
      templateId: dataTemplate.data.id,
    })) as { data: { token: string } };
    const token = dataTenant.data.token;
    const own = (await call('GET', '/tenant', token)) as { data: { desks: Array<{ tables: Array<{ id: number }> }> } };
    const tableIds = own.data.desks.flatMap((desk) => desk.tables.map((table) => table.id));
    const owner = (await call('POST', '/tenant/users', token, { login: 'owner@bench.io', nome: 'Owner' })) as {
      data: { id: number };
    };
    for (let index = 0; index < 20; index++) {
      await call('POST', '/tenant/datamart', token, { nome: `Datamart ${index}`, tables: tableIds, owners: [owner.data.id] });
    }
    for (let run = 0; run < options.runs; run++) {
      record(
        `GET /tenant/datamart (20 × ${tableIds.length} tables × 20 columns)`,
        await measure(() => call('GET', '/tenant/datamart', token)),
      );
    }
    return Object.entries(samples).map(([operation, runs]) => {
      const middle = [...runs].sort((a, b) => a.ms - b.ms)[Math.floor(runs.length / 2)];
      return {
        operation,
        runs: runs.length,
        medianMs: median(runs.map((sample) => sample.ms)),
        maxMs: Math.max(...runs.map((sample) => sample.ms)),
        roundTrips: middle?.roundTrips ?? 0,
      };
    });
  });
}

export interface ScalingRow {
  operation: string;
  scale: string;
  size: number;
  ms: number;
  roundTrips: number;
}

/**
 * The same operations at 1x, 10x and 100x data: template apply (50, 500, 5,000 resources), reload
 * (5, 50, 500 items) and the datamart listing (2, 20, 200 datamarts of 10 tables; one page).
 */
export async function measureScaling(twin: Pick<Twin, 'url' | 'clientToken'>): Promise<ScalingRow[]> {
  const call = (method: string, path: string, token: string, body?: unknown) => callTwin(twin, method, path, token, body);
  const scales = ['1x', '10x', '100x'] as const;
  return countingRoundTrips(async (measure) => {
    const rows: ScalingRow[] = [];
    for (const [index, scale] of scales.entries()) {
      const resources = 50 * 10 ** index;
      const template = await call('POST', '/tenants/templates', twin.clientToken, benchBundle(resources + 1));
      const tenant = await call('POST', '/tenants', twin.clientToken, { nome: `Scale ${scale}`, ativo: true });
      const token = tenant.data.token as string;
      let plan: unknown[] = [];
      const apply = await measure(async () => {
        plan = (await call('POST', '/tenant/templates/apply', token, { templateId: template.data.id })).reloadPlan as unknown[];
      });
      rows.push({ operation: 'template apply (resources)', scale, size: resources, ...apply });
      const agent = await call('POST', '/tenant/agents/1/token', token);
      await call('POST', '/agent/heartbeat', agent.data.token as string);
      const items = plan.slice(0, 5 * 10 ** index);
      const reload = await measure(() => call('POST', '/tenant/templates/reload', token, { items }));
      rows.push({ operation: 'reload (items)', scale, size: items.length, ...reload });
    }
    const template = await call('POST', '/tenants/templates', twin.clientToken, benchBundle(51));
    const tenant = await call('POST', '/tenants', twin.clientToken, {
      nome: 'Scale datamarts',
      ativo: true,
      templateId: template.data.id,
    });
    const token = tenant.data.token as string;
    const own = await call('GET', '/tenant', token);
    const tables = (own.data.desks as Array<{ tables: Array<{ id: number }> }>).flatMap((desk) =>
      desk.tables.map((table) => table.id),
    );
    const owner = await call('POST', '/tenant/users', token, { login: 'owner@scale.io', nome: 'Owner' });
    let created = 0;
    for (const [index, scale] of scales.entries()) {
      const datamarts = 2 * 10 ** index;
      for (; created < datamarts; created++) {
        await call('POST', '/tenant/datamart', token, { nome: `Datamart ${created}`, tables, owners: [owner.data.id] });
      }
      const listing = await measure(() => call('GET', '/tenant/datamart', token));
      rows.push({
        operation: `GET /tenant/datamart (datamarts of ${tables.length} tables, first page)`,
        scale,
        size: datamarts,
        ...listing,
      });
    }
    return rows;
  });
}
