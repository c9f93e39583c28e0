/** The template bundles the benches apply (bench/write-costs.ts), of any size. */
import type { TemplateBundle } from '#functions/core/templates/bundle.ts';

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
