import { describe, expect, test } from 'vitest';
import type { AgentRecord } from '#functions/core/agents/agent-repository.ts';
import { reloadPlan } from '#functions/core/reload/plan.ts';
import type { TemplateBundle } from '#functions/core/templates/bundle.ts';
import {
  computeChanges,
  type IdCounter,
  idCounters,
  newIdsNeeded,
  type StoredOf,
  type StoredResource,
} from '#functions/core/templates/tenant-resources.ts';

const bundle = (columns: Array<[string, string, string]>, extra: Partial<TemplateBundle> = {}): TemplateBundle => ({
  nome: 'T',
  desks: [{ key: 'd', nome: 'Desk' }],
  tables: [
    {
      key: 'orders',
      nome: 'Orders',
      desk: 'd',
      columns: columns.map(([column_name, data_type, label]) => ({ column_name, data_type, label })),
    },
  ],
  ...extra,
});

/** Applies `next` over `current` with ids counted up from 100 per counter: the pure part of an apply. */
function apply(next: TemplateBundle, current: StoredResource[] = [], version = 1) {
  const needs = newIdsNeeded(next, current);
  const fresh = Object.fromEntries(
    Object.entries(needs).map(([counter, count]) => [counter, Array.from({ length: count }, (_, index) => 100 + index)]),
  ) as Record<IdCounter, number[]>;
  const changes = computeChanges(1, { templateId: 9, version }, next, current, fresh);
  const state = new Map(current.map((resource) => [`${resource.type}:${resource.key}`, resource]));
  for (const resource of changes.changed) state.set(`${resource.type}:${resource.key}`, resource);
  return { ...changes, needs, state: [...state.values()] };
}

const table = (state: StoredResource[]) => state.find((resource) => resource.type === 'table') as StoredOf<'table'>;

describe('what an apply changes', () => {
  const v1 = bundle([
    ['id', 'int', 'Id'],
    ['total', 'decimal', 'Total'],
  ]);

  test('a first apply creates everything, with fresh ids', () => {
    const first = apply(v1);
    expect(first.needs).toMatchObject({ desk: 1, table: 1, column: 2 });
    expect(first.changed.map((resource) => resource.type)).toEqual(['desk', 'table']);
    expect(first.createdOrRebuiltTables).toEqual(['orders']);
    expect(table(first.state).columns.map((column) => column.id)).toEqual([100, 101]);
  });

  test('the same bundle again changes nothing and needs no ids', () => {
    const first = apply(v1);
    const second = apply(v1, first.state, 2);
    expect(Object.keys(second.needs).sort()).toEqual([...idCounters].sort());
    expect(Object.values(second.needs).every((count) => count === 0)).toBe(true);
    expect(second.changed).toEqual([]);
    expect(second.createdOrRebuiltTables).toEqual([]);
  });

  test.each([
    [
      'a label',
      [
        ['id', 'int', 'Identifier'],
        ['total', 'decimal', 'Total'],
      ],
      false,
    ],
    [
      'a data type',
      [
        ['id', 'bigint', 'Id'],
        ['total', 'decimal', 'Total'],
      ],
      true,
    ],
    [
      'the column order',
      [
        ['total', 'decimal', 'Total'],
        ['id', 'int', 'Id'],
      ],
      true,
    ],
    [
      'a new column',
      [
        ['id', 'int', 'Id'],
        ['total', 'decimal', 'Total'],
        ['tax', 'decimal', 'Tax'],
      ],
      true,
    ],
    ['a dropped column', [['id', 'int', 'Id']], true],
  ] as Array<[string, Array<[string, string, string]>, boolean]>)(
    'changing %s overwrites the table; rebuilt: %s',
    (_what, columns, rebuilt) => {
      const first = apply(v1);
      const second = apply(bundle(columns), first.state, 2);
      expect(second.changed.map((resource) => resource.key)).toEqual(['orders']);
      expect(second.createdOrRebuiltTables).toEqual(rebuilt ? ['orders'] : []);
      // Ids never change: the table keeps its id and every surviving column keeps its own.
      expect(table(second.state).id).toBe(table(first.state).id);
      for (const column of table(second.state).columns) {
        const before = table(first.state).columns.find((old) => old.column_name === column.column_name);
        if (before) expect(column.id).toBe(before.id);
      }
      expect(table(second.state).changedInVersion).toBe(2);
    },
  );

  test('a renamed table is overwritten, not rebuilt; resources left out of the bundle stay', () => {
    const first = apply(bundle([['id', 'int', 'Id']], { applications: [{ key: 'a', nome: 'A', route: '/a' }] }));
    const renamed = bundle([['id', 'int', 'Id']]);
    renamed.tables = renamed.tables?.map((t) => ({ ...t, nome: 'All orders' }));
    const second = apply(renamed, first.state, 2);
    expect(second.createdOrRebuiltTables).toEqual([]);
    expect(second.state.map((resource) => resource.key).sort()).toEqual(['a', 'd', 'orders']);
  });
});

describe('the reload plan', () => {
  const agents: AgentRecord[] = [
    { agentId: 1, tenantId: 1, clientId: 1, nome: 'default', isDefault: true, tokenHash: '', createdAt: '' },
    { agentId: 2, tenantId: 1, clientId: 1, nome: 'warehouse', isDefault: false, tokenHash: '', createdAt: '' },
  ];
  const flows = apply({
    nome: 'T',
    desks: [{ key: 'd', nome: 'D' }],
    tables: ['a', 'b', 'c'].map((key) => ({
      key,
      nome: key,
      desk: 'd',
      columns: [{ column_name: 'x', data_type: 'int', label: 'X' }],
    })),
    connections: [
      { key: 'erp', nome: 'ERP', kind: 'pg' },
      { key: 'wh', nome: 'WH', kind: 'pg', agent: 'warehouse' },
      { key: 'crm', nome: 'CRM', kind: 'pg', agent: 'crm' },
    ],
    flows: [
      { key: 'to-c', nome: 'c', connection: 'crm', reads: ['b'], writes: ['c'], context: 'full' },
      { key: 'to-b', nome: 'b', connection: 'wh', reads: ['a'], writes: ['b'], context: 'inc' },
      { key: 'to-a', nome: 'a', connection: 'erp', writes: ['a'], context: 'full' },
    ],
  }).state;
  const ofType = <T extends StoredResource['type']>(type: T) => flows.filter((r): r is StoredOf<T> => r.type === type);
  const idOf = (key: string) => ofType('flow').find((flow) => flow.key === key)?.id;

  test('lists the flows writing the given tables, in dependency order, on the agent of each connection slot', () => {
    const plan = reloadPlan(new Set(['a', 'b', 'c']), ofType('flow'), ofType('connection'), agents);
    expect(plan).toEqual([
      { flowId: idOf('to-a'), tokenId: 1, context: 'full' },
      { flowId: idOf('to-b'), tokenId: 2, context: 'inc' },
      // No agent fills the `crm` slot: the default agent runs it.
      { flowId: idOf('to-c'), tokenId: 1, context: 'full' },
    ]);
  });

  test('only the flows of the given tables', () => {
    expect(reloadPlan(new Set(['b']), ofType('flow'), ofType('connection'), agents).map((item) => item.flowId)).toEqual([
      idOf('to-b'),
    ]);
    expect(reloadPlan(new Set(), ofType('flow'), ofType('connection'), agents)).toEqual([]);
  });
});
