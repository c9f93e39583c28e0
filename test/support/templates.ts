import type { TemplateBundle } from '#functions/core/templates/bundle.ts';
import { api } from './api.ts';

/**
 * A small retail template: `load-orders` writes `orders` from the ERP; `daily-sales` reads
 * `orders` and writes `daily` (so it depends on load-orders); `load-stock` writes `stock` from
 * the warehouse connection, whose agent slot is `warehouse`.
 */
export function retailBundle(): TemplateBundle {
  return {
    nome: 'Retail',
    desks: [{ key: 'sales', nome: 'Sales' }],
    tables: [
      {
        key: 'orders',
        nome: 'Orders',
        desk: 'sales',
        columns: [
          { column_name: 'order_id', data_type: 'integer', label: 'Order' },
          { column_name: 'total', data_type: 'decimal(12,2)', label: 'Total' },
        ],
      },
      { key: 'daily', nome: 'Daily sales', desk: 'sales', columns: [{ column_name: 'day', data_type: 'date', label: 'Day' }] },
      { key: 'stock', nome: 'Stock', desk: 'sales', columns: [{ column_name: 'sku', data_type: 'text', label: 'SKU' }] },
    ],
    connections: [
      { key: 'erp', nome: 'ERP', kind: 'postgres' },
      { key: 'warehouse', nome: 'Warehouse', kind: 'mysql', agent: 'warehouse' },
    ],
    flows: [
      {
        key: 'daily-sales',
        nome: 'Daily sales',
        connection: 'erp',
        reads: ['orders'],
        writes: ['daily'],
        context: 'incremental',
      },
      { key: 'load-orders', nome: 'Load orders', connection: 'erp', writes: ['orders'], context: 'full' },
      { key: 'load-stock', nome: 'Load stock', connection: 'warehouse', writes: ['stock'], context: 'full' },
    ],
    applications: [{ key: 'sales-app', nome: 'Sales', route: '/apps/sales' }],
    dashboards: [
      {
        key: 'overview',
        nome: 'Overview',
        application: 'sales-app',
        widgets: [{ key: 'by-day', nome: 'Sales by day', kind: 'chart', table: 'daily' }],
      },
    ],
  };
}

/** The shape of a flow, for bundles made of flows alone. */
export interface FlowShape {
  key: string;
  reads?: string[];
  writes: string[];
}

/** A template of `flows`, defining every table they name (one desk, one connection). */
export function bundleOf(nome: string, flows: FlowShape[], extra: Partial<TemplateBundle> = {}): TemplateBundle {
  const tables = [...new Set(flows.flatMap((flow) => [...(flow.reads ?? []), ...flow.writes]))];
  return {
    nome,
    desks: [{ key: 'main', nome: 'Main' }],
    connections: [{ key: 'db', nome: 'DB', kind: 'postgres' }],
    tables: tables.map((key) => ({
      key,
      nome: key,
      desk: 'main',
      columns: [{ column_name: 'id', data_type: 'integer', label: 'Id' }],
    })),
    flows: flows.map((flow) => ({ ...flow, nome: flow.key, connection: 'db', context: 'full' })),
    ...extra,
  };
}

export async function publish(clientToken: string, bundle: TemplateBundle): Promise<number> {
  const answer = await api('POST', '/tenants/templates', { token: clientToken, body: bundle });
  if (answer.status !== 201) throw new Error(`Publish failed: ${answer.status} ${JSON.stringify(answer.body)}`);
  return answer.body.data.id;
}

/** The default agent's token, obtained the documented way: by rotating it. */
export async function agentToken(tenantToken: string, agentId = 1): Promise<string> {
  const answer = await api('POST', `/tenant/agents/${agentId}/token`, { token: tenantToken });
  if (answer.status !== 200) throw new Error(`Agent token failed: ${answer.status} ${JSON.stringify(answer.body)}`);
  return answer.body.data.token;
}

/** Polls until `check` returns a value (loads go through the queue and the worker asynchronously). */
export async function eventually<T>(check: () => Promise<T | undefined>, timeoutMs = 15_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`Condition not met within ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}
