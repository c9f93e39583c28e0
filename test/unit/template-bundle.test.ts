import { describe, expect, test } from 'vitest';
import templateBundleSchema from '#functions/core/api/validators/template-bundle.cjs';
import { validateBody } from '#functions/core/api/validation.ts';
import { type FieldError, ServiceError } from '#functions/core/errors.ts';
import { type BundleFlow, checkBundle, flowDependencyOrder, type TemplateBundle } from '#functions/core/templates/bundle.ts';

/** Every list present, so tests can push to them. */
type FullBundle = Required<TemplateBundle>;

const example = (): FullBundle => ({
  nome: 'Retail analytics',
  description: 'optional text',
  desks: [{ key: 'sales', nome: 'Sales' }],
  tables: [
    {
      key: 'orders',
      nome: 'Orders',
      desk: 'sales',
      columns: [{ column_name: 'order_id', data_type: 'integer', label: 'Order' }],
    },
  ],
  connections: [
    {
      key: 'erp',
      nome: 'ERP database',
      kind: 'postgres',
      agent: 'default',
      properties: { host: 'erp.internal', port: 5432 },
    },
  ],
  flows: [{ key: 'load-orders', nome: 'Load orders', connection: 'erp', reads: [], writes: ['orders'], context: 'full' }],
  applications: [{ key: 'sales-app', nome: 'Sales', route: '/apps/sales' }],
  dashboards: [
    {
      key: 'sales-overview',
      nome: 'Sales overview',
      application: 'sales-app',
      widgets: [{ key: 'orders-by-day', nome: 'Orders by day', kind: 'chart', table: 'orders' }],
    },
  ],
});

/** The example changed by `edit`, as an untyped body (the schema tests send what a client could). */
function exampleWith(edit: (body: Record<string, unknown> & FullBundle) => void): unknown {
  const body: Record<string, unknown> & FullBundle = example();
  edit(body);
  return body;
}

function schemaErrors(body: unknown): FieldError[] {
  try {
    validateBody(templateBundleSchema, body);
  } catch (error) {
    if (error instanceof ServiceError) return error.errors;
    throw error;
  }
  throw new Error('expected the body to be refused');
}

/** The item at `index`; a test setup mistake when absent. */
function nth<T>(items: readonly T[], index: number): T {
  if (index >= items.length) throw new Error(`no item ${index}`);
  return items[index] as T;
}

const pointersOf = (errors: FieldError[]) => errors.map((error) => error.pointer);

describe('template bundle schema', () => {
  test('the documented example passes and has nothing for checkBundle to report', () => {
    const body = example();
    expect(validateBody<TemplateBundle>(templateBundleSchema, body)).toBe(body);
    expect(checkBundle(body)).toEqual([]);
  });

  test('a minimal bundle is just a name', () => {
    expect(validateBody(templateBundleSchema, { nome: 'Empty' })).toEqual({ nome: 'Empty' });
  });

  test.each<[string, (body: Record<string, unknown> & FullBundle) => void, string]>([
    ['an extra root property', (body) => (body.extra = 1), '/extra'],
    ['a missing nome', (body) => delete (body as Partial<TemplateBundle>).nome, '/nome'],
    ['a key outside the pattern', (body) => (nth(body.desks, 0).key = 'Sales Desk'), '/desks/0/key'],
    ['a reference outside the key pattern', (body) => (nth(body.tables, 0).desk = '-sales'), '/tables/0/desk'],
    ['a table without columns', (body) => (nth(body.tables, 0).columns = []), '/tables/0/columns'],
    [
      'a column name that is no identifier',
      (body) => (nth(nth(body.tables, 0).columns, 0).column_name = '1st'),
      '/tables/0/columns/0/column_name',
    ],
    ['a protocol-relative route', (body) => (nth(body.applications, 0).route = '//evil.example'), '/applications/0/route'],
    ['an absolute URL as route', (body) => (nth(body.applications, 0).route = 'https://x'), '/applications/0/route'],
    ['a route with whitespace', (body) => (nth(body.applications, 0).route = '/apps/sales team'), '/applications/0/route'],
    ['a route with a backslash', (body) => (nth(body.applications, 0).route = '/\\evil.example'), '/applications/0/route'],
    ['a flow writing nothing', (body) => (nth(body.flows, 0).writes = []), '/flows/0/writes'],
    ['a flow reading a table twice', (body) => (nth(body.flows, 0).reads = ['orders', 'orders']), '/flows/0/reads'],
    [
      'a nested connection property',
      (body) => (nth(body.connections, 0).properties = { options: { ssl: true } } as never),
      '/connections/0/properties/options',
    ],
    [
      'a null connection property',
      (body) => (nth(body.connections, 0).properties = { host: null } as never),
      '/connections/0/properties/host',
    ],
    [
      'an extra widget property',
      (body) => ((nth(nth(body.dashboards, 0).widgets, 0) as unknown as Record<string, unknown>).query = 'x'),
      '/dashboards/0/widgets/0/query',
    ],
  ])('refuses %s at its pointer', (_, edit, pointer) => {
    expect(pointersOf(schemaErrors(exampleWith(edit)))).toEqual([pointer]);
  });

  test('refusals carry readable messages', () => {
    expect(schemaErrors(exampleWith((body) => (body.extra = 1)))).toEqual([
      { location: 'body', pointer: '/extra', message: 'is not allowed' },
    ]);
    expect(schemaErrors(exampleWith((body) => (nth(body.tables, 0).columns = [])))).toEqual([
      { location: 'body', pointer: '/tables/0/columns', message: 'must have at least 1 item' },
    ]);
  });

  test('connection properties are capped at 50', () => {
    const properties = Object.fromEntries(Array.from({ length: 51 }, (_, index) => [`p${index}`, index]));
    expect(pointersOf(schemaErrors(exampleWith((body) => (nth(body.connections, 0).properties = properties))))).toEqual([
      '/connections/0/properties',
    ]);
  });
});

const flow = (key: string, reads: string[], writes: string[]): BundleFlow => ({
  key,
  nome: key,
  connection: 'erp',
  reads,
  writes,
  context: 'full',
});

/** A valid bundle around the given flows: every table they name exists. */
function bundleWithFlows(...flows: BundleFlow[]): TemplateBundle {
  const tables = [...new Set(flows.flatMap((each) => [...(each.reads ?? []), ...each.writes]))];
  return {
    nome: 'Flows',
    desks: [{ key: 'd', nome: 'D' }],
    tables: tables.map((key) => ({
      key,
      nome: key,
      desk: 'd',
      columns: [{ column_name: 'id', data_type: 'integer', label: '' }],
    })),
    connections: [{ key: 'erp', nome: 'ERP', kind: 'postgres' }],
    flows,
  };
}

const bodyError = (pointer: string, message: string): FieldError => ({ location: 'body', pointer, message });

describe('checkBundle', () => {
  test('reports a later duplicate key of each resource type, pointing at the first', () => {
    const bundle = example();
    bundle.desks.push({ key: 'sales', nome: 'Sales again' });
    bundle.tables.push(structuredClone(nth(bundle.tables, 0)));
    bundle.connections.push({ key: 'erp', nome: 'ERP again', kind: 'postgres' });
    bundle.flows.push(flow('load-orders', [], ['orders']));
    bundle.applications.push(
      { key: 'other', nome: 'Other', route: '/other' },
      { key: 'sales-app', nome: 'Again', route: '/again' },
    );
    bundle.dashboards.push({ key: 'sales-overview', nome: 'Again', widgets: [] });
    expect(checkBundle(bundle)).toEqual([
      bodyError('/desks/1/key', 'duplicates the key "sales" (first at /desks/0)'),
      bodyError('/tables/1/key', 'duplicates the key "orders" (first at /tables/0)'),
      bodyError('/connections/1/key', 'duplicates the key "erp" (first at /connections/0)'),
      bodyError('/flows/1/key', 'duplicates the key "load-orders" (first at /flows/0)'),
      bodyError('/applications/2/key', 'duplicates the key "sales-app" (first at /applications/0)'),
      bodyError('/dashboards/1/key', 'duplicates the key "sales-overview" (first at /dashboards/0)'),
    ]);
  });

  test('reports every repeat of a key, each against the first', () => {
    const bundle = example();
    bundle.desks.push({ key: 'sales', nome: 'Two' }, { key: 'sales', nome: 'Three' });
    expect(checkBundle(bundle)).toEqual([
      bodyError('/desks/1/key', 'duplicates the key "sales" (first at /desks/0)'),
      bodyError('/desks/2/key', 'duplicates the key "sales" (first at /desks/0)'),
    ]);
  });

  test('reports a duplicate column within a table, ignoring case, but not across tables', () => {
    const bundle = example();
    const column = { column_name: 'amount', data_type: 'numeric', label: 'Amount' };
    nth(bundle.tables, 0).columns.push(column, { ...column, column_name: 'ORDER_ID' });
    bundle.tables.push({ key: 'items', nome: 'Items', desk: 'sales', columns: [{ ...column, column_name: 'order_id' }] });
    expect(checkBundle(bundle)).toEqual([
      bodyError('/tables/0/columns/2/column_name', 'duplicates the column "ORDER_ID" (first at /tables/0/columns/0)'),
    ]);
  });

  test('reports a duplicate widget within a dashboard, but not across dashboards', () => {
    const bundle = example();
    const widget = nth(nth(bundle.dashboards, 0).widgets, 0);
    nth(bundle.dashboards, 0).widgets.push({ ...widget, nome: 'Other' });
    bundle.dashboards.push({ key: 'other', nome: 'Other', widgets: [{ ...widget }] });
    expect(checkBundle(bundle)).toEqual([
      bodyError('/dashboards/0/widgets/1/key', 'duplicates the key "orders-by-day" (first at /dashboards/0/widgets/0)'),
    ]);
  });

  test('reports each reference to a key the bundle does not define, at the reference', () => {
    const bundle = example();
    nth(bundle.tables, 0).desk = 'finance';
    Object.assign(nth(bundle.flows, 0), { connection: 'crm', reads: ['orders', 'customers'], writes: ['orders', 'stock'] });
    nth(bundle.dashboards, 0).application = 'finance-app';
    nth(bundle.dashboards, 0).widgets.push({ key: 'stock', nome: 'Stock', kind: 'kpi', table: 'stock' });
    expect(checkBundle(bundle)).toEqual([
      bodyError('/tables/0/desk', 'refers to desk "finance", which this template does not define'),
      bodyError('/flows/0/connection', 'refers to connection "crm", which this template does not define'),
      bodyError('/flows/0/reads/1', 'refers to table "customers", which this template does not define'),
      bodyError('/flows/0/writes/1', 'refers to table "stock", which this template does not define'),
      bodyError('/dashboards/0/application', 'refers to application "finance-app", which this template does not define'),
      bodyError('/dashboards/0/widgets/1/table', 'refers to table "stock", which this template does not define'),
    ]);
  });

  test('references into a missing resource list are all missing', () => {
    const { desks: _, ...bundle } = example();
    expect(checkBundle(bundle)).toEqual([
      bodyError('/tables/0/desk', 'refers to desk "sales", which this template does not define'),
    ]);
  });

  test('optional references may be left out', () => {
    const bundle = example();
    delete nth(bundle.dashboards, 0).application;
    delete nth(nth(bundle.dashboards, 0).widgets, 0).table;
    delete nth(bundle.flows, 0).reads;
    expect(checkBundle(bundle)).toEqual([]);
  });

  test('reports a two-flow cycle once, at its first flow', () => {
    const bundle = bundleWithFlows(flow('a', ['t2'], ['t1']), flow('b', ['t1'], ['t2']));
    expect(checkBundle(bundle)).toEqual([bodyError('/flows/0', 'flows form a dependency cycle: a → b → a')]);
  });

  test('reports a three-flow cycle with its keys in the order data moves', () => {
    const bundle = bundleWithFlows(
      flow('extra', [], ['t0']),
      flow('c', ['t2'], ['t3']),
      flow('a', ['t3', 't0'], ['t1']),
      flow('b', ['t1'], ['t2']),
    );
    expect(checkBundle(bundle)).toEqual([bodyError('/flows/1', 'flows form a dependency cycle: c → a → b → c')]);
  });

  test('reports separate cycles separately', () => {
    const bundle = bundleWithFlows(
      flow('a', ['t2'], ['t1']),
      flow('b', ['t1'], ['t2']),
      flow('c', ['t4'], ['t3']),
      flow('d', ['t3'], ['t4']),
    );
    expect(checkBundle(bundle)).toEqual([
      bodyError('/flows/0', 'flows form a dependency cycle: a → b → a'),
      bodyError('/flows/2', 'flows form a dependency cycle: c → d → c'),
    ]);
  });

  test('a flow reading the table it writes (an incremental load) is no cycle', () => {
    expect(checkBundle(bundleWithFlows(flow('a', ['t1'], ['t1']), flow('b', ['t1'], ['t2'])))).toEqual([]);
  });

  test('two incremental loads of one table do not depend on each other', () => {
    expect(checkBundle(bundleWithFlows(flow('a', ['t1'], ['t1']), flow('b', ['t1'], ['t1'])))).toEqual([]);
  });
});

const keys = (flows: readonly { key: string }[]) => flows.map(({ key }) => key);
const orderable = (key: string, reads: string[], writes: string[]) => ({ key, reads, writes });

describe('flowDependencyOrder', () => {
  const diamond = {
    a: orderable('a', [], ['t1']),
    b: orderable('b', ['t1'], ['t2']),
    c: orderable('c', ['t1'], ['t3']),
    d: orderable('d', ['t2', 't3'], ['t4']),
  };

  test('puts each flow after the flows whose tables it reads', () => {
    const { a, b, c, d } = diamond;
    expect(keys(flowDependencyOrder([a, b, c, d]))).toEqual(['a', 'b', 'c', 'd']);
    expect(keys(flowDependencyOrder([d, c, b, a]))).toEqual(['a', 'c', 'b', 'd']);
    expect(keys(flowDependencyOrder([b, d, a, c]))).toEqual(['a', 'b', 'c', 'd']);
  });

  test('keeps input order among flows free to run', () => {
    const flows = [orderable('z', [], ['t1']), orderable('y', [], ['t2']), orderable('x', ['t9'], ['t3'])];
    expect(keys(flowDependencyOrder(flows))).toEqual(['z', 'y', 'x']);
    const late = [orderable('late', ['t1'], ['t2']), orderable('free', [], ['t3']), orderable('source', [], ['t1'])];
    expect(keys(flowDependencyOrder(late))).toEqual(['free', 'source', 'late']);
  });

  test('returns the same objects, accepts flows without reads, and ignores self-reads', () => {
    const first = { key: 'first', writes: ['t1'], agent: 'x' };
    const second = orderable('second', ['t1', 't2'], ['t2']);
    const ordered = flowDependencyOrder([second, first]);
    expect(ordered).toEqual([first, second]);
    expect(ordered[0]).toBe(first);
    expect(flowDependencyOrder([])).toEqual([]);
  });

  test('throws on a cycle, naming it', () => {
    const flows = [orderable('free', [], ['t0']), orderable('a', ['t2'], ['t1']), orderable('b', ['t1'], ['t2'])];
    expect(() => flowDependencyOrder(flows)).toThrow('flows form a dependency cycle: a → b → a');
  });

  test('orders a long chain without overflowing the stack', () => {
    const chain = Array.from({ length: 20_000 }, (_, index) =>
      orderable(`f${index}`, index === 0 ? [] : [`t${index - 1}`], [`t${index}`]),
    );
    expect(flowDependencyOrder([...chain].reverse())).toEqual(chain);
    const cyclic = [...chain, orderable('loop', ['t19999'], ['t-1'])];
    cyclic[0] = orderable('f0', ['t-1'], ['t0']);
    expect(() => flowDependencyOrder(cyclic)).toThrow(/^flows form a dependency cycle: f0 → f1 → /);
  });
});

describe('a pseudo-random check of the order', () => {
  /** Small deterministic generator (mulberry32): reproducible without a property-testing library. */
  function random(seed: number) {
    let state = seed;
    return () => {
      state = (state + 0x6d2b79f5) | 0;
      let t = Math.imul(state ^ (state >>> 15), 1 | state);
      t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
      return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
    };
  }

  test('any acyclic flow set comes out with every reader after every writer of what it reads', () => {
    for (let seed = 1; seed <= 200; seed++) {
      const next = random(seed);
      const count = 1 + Math.floor(next() * 12);
      // Flow i writes table i and reads only lower tables: acyclic by construction; then shuffled.
      const flows = Array.from({ length: count }, (_, index) =>
        orderable(
          `f${index}`,
          Array.from({ length: index }, (__, table) => table)
            .filter(() => next() < 0.3)
            .map((table) => `t${table}`),
          [`t${index}`],
        ),
      );
      const shuffled = flows
        .map((each) => ({ each, sortKey: next() }))
        .sort((x, y) => x.sortKey - y.sortKey)
        .map(({ each }) => each);
      const ordered = flowDependencyOrder(shuffled);
      expect(new Set(ordered)).toEqual(new Set(shuffled));
      const position = new Map(ordered.map((each, index) => [each.key, index]));
      for (const reader of ordered) {
        for (const table of reader.reads) {
          expect(position.get(`f${table.slice(1)}`)).toBeLessThan(position.get(reader.key) as number);
        }
      }
      expect(checkBundle(bundleWithFlows(...shuffled.map((each) => flow(each.key, each.reads, each.writes))))).toEqual([]);
    }
  });
});
