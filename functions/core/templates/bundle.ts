/**
 * A template bundle (the body of POST /tenants/templates, schemas/template-bundle.schema.json) and
 * the checks its schema cannot express: unique keys, references that resolve, flows without
 * dependency cycles. Pure: the same code serves publishing and, for the flow order, reloads.
 */
import type { Column, Flow, TemplateBundleBody } from '#functions/core/api/validators/template-bundle.cjs';
import type { FieldError } from '#functions/core/errors.ts';

export type TemplateBundle = TemplateBundleBody;
export type BundleFlow = Flow;

/** The shape flow ordering needs: bundle flows and the flows stored in a tenant both have it. */
interface OrderableFlow {
  key: string;
  reads?: readonly string[];
  writes: readonly string[];
}

/** Every problem of an already schema-valid bundle, as body errors; empty when it can be published. */
export function checkBundle(bundle: TemplateBundle): FieldError[] {
  return [...duplicateErrors(bundle), ...referenceErrors(bundle), ...cycleErrors(bundle.flows ?? [])];
}

/**
 * The flows in an order where each comes after the flows that write the tables it reads. Among
 * flows free to run, input order is kept, so the same flows always load in the same order.
 * Throws when the flows form a dependency cycle (no such order exists).
 */
export function flowDependencyOrder<T extends OrderableFlow>(flows: readonly T[]): T[] {
  const dependencies = flowDependencies(flows);
  const dependents = invert(dependencies);
  const pendingCounts = dependencies.map((upstream) => upstream.length);
  // Indices of flows whose dependencies have all been placed, ascending (that is what keeps input order).
  const ready = pendingCounts.flatMap((count, index) => (count === 0 ? [index] : []));
  const ordered: T[] = [];
  while (ready.length > 0) {
    const next = ready.shift() as number;
    ordered.push(flows[next] as T);
    for (const dependent of dependents[next] ?? []) {
      pendingCounts[dependent] = (pendingCounts[dependent] ?? 0) - 1;
      if (pendingCounts[dependent] === 0) insertSorted(ready, dependent);
    }
  }
  if (ordered.length < flows.length) {
    const [cycle] = dependencyCycles(dependencies);
    throw new Error(cycle ? cycleMessage(flows, cycle) : 'flows form a dependency cycle');
  }
  return ordered;
}

// ---- duplicates -------------------------------------------------------------------------------

const at = (pointer: string, message: string): FieldError => ({ location: 'body', pointer, message });

const resourceTypes = ['desks', 'tables', 'connections', 'flows', 'applications', 'dashboards'] as const;

function duplicateErrors(bundle: TemplateBundle): FieldError[] {
  const errors = resourceTypes.flatMap((type) => duplicateKeyErrors(bundle[type] ?? [], `/${type}`));
  (bundle.tables ?? []).forEach((table, index) =>
    errors.push(...duplicateColumnErrors(table.columns, `/tables/${index}/columns`)),
  );
  (bundle.dashboards ?? []).forEach((dashboard, index) =>
    errors.push(...duplicateKeyErrors(dashboard.widgets, `/dashboards/${index}/widgets`)),
  );
  return errors;
}

function duplicateKeyErrors(items: readonly { key: string }[], pointer: string): FieldError[] {
  const firstIndexByKey = new Map<string, number>();
  const errors: FieldError[] = [];
  items.forEach(({ key }, index) => {
    const first = firstIndexByKey.get(key);
    if (first === undefined) firstIndexByKey.set(key, index);
    else errors.push(at(`${pointer}/${index}/key`, `duplicates the key "${key}" (first at ${pointer}/${first})`));
  });
  return errors;
}

/**
 * Column names are compared ignoring case: most databases fold unquoted identifiers (PostgreSQL to
 * lower case, SQL Server compares them case-insensitively), so `Id` and `id` would be one column.
 */
function duplicateColumnErrors(columns: readonly Column[], pointer: string): FieldError[] {
  const firstIndexByName = new Map<string, number>();
  const errors: FieldError[] = [];
  columns.forEach(({ column_name: name }, index) => {
    const folded = name.toLowerCase();
    const first = firstIndexByName.get(folded);
    if (first === undefined) firstIndexByName.set(folded, index);
    else errors.push(at(`${pointer}/${index}/column_name`, `duplicates the column "${name}" (first at ${pointer}/${first})`));
  });
  return errors;
}

// ---- references -------------------------------------------------------------------------------

function referenceErrors(bundle: TemplateBundle): FieldError[] {
  const keysOf = (items: readonly { key: string }[] = []) => new Set(items.map(({ key }) => key));
  const desks = keysOf(bundle.desks);
  const tables = keysOf(bundle.tables);
  const connections = keysOf(bundle.connections);
  const applications = keysOf(bundle.applications);
  const errors: FieldError[] = [];
  const check = (defined: Set<string>, kind: string, key: string | undefined, pointer: string) => {
    if (key !== undefined && !defined.has(key)) {
      errors.push(at(pointer, `refers to ${kind} "${key}", which this template does not define`));
    }
  };
  (bundle.tables ?? []).forEach((table, index) => check(desks, 'desk', table.desk, `/tables/${index}/desk`));
  (bundle.flows ?? []).forEach((flow, index) => {
    check(connections, 'connection', flow.connection, `/flows/${index}/connection`);
    (flow.reads ?? []).forEach((table, position) => check(tables, 'table', table, `/flows/${index}/reads/${position}`));
    flow.writes.forEach((table, position) => check(tables, 'table', table, `/flows/${index}/writes/${position}`));
  });
  (bundle.dashboards ?? []).forEach((dashboard, index) => {
    check(applications, 'application', dashboard.application, `/dashboards/${index}/application`);
    dashboard.widgets.forEach((widget, position) =>
      check(tables, 'table', widget.table, `/dashboards/${index}/widgets/${position}/table`),
    );
  });
  return errors;
}

// ---- flow dependencies ------------------------------------------------------------------------

function cycleErrors(flows: readonly BundleFlow[]): FieldError[] {
  return dependencyCycles(flowDependencies(flows)).map((cycle) => at(`/flows/${cycle[0]}`, cycleMessage(flows, cycle)));
}

const cycleMessage = (flows: readonly OrderableFlow[], cycle: readonly number[]) =>
  `flows form a dependency cycle: ${[...cycle, cycle[0]].map((index) => flows[index as number]?.key).join(' → ')}`;

/**
 * For each flow (by index), the flows it depends on: those that write a table it reads, ascending.
 * Flows are identified by index, not key, so duplicate keys cannot merge two flows. A read of a
 * table the flow writes itself is its own previous output (an incremental load finding where it
 * stopped), so it depends on no one for that table, not even on other writers of it.
 */
function flowDependencies(flows: readonly OrderableFlow[]): number[][] {
  const writersByTable = new Map<string, number[]>();
  flows.forEach((flow, index) => {
    for (const table of new Set(flow.writes)) {
      const writers = writersByTable.get(table) ?? [];
      writers.push(index);
      writersByTable.set(table, writers);
    }
  });
  return flows.map((flow) => {
    const ownTables = new Set(flow.writes);
    const upstream = (flow.reads ?? [])
      .filter((table) => !ownTables.has(table))
      .flatMap((table) => writersByTable.get(table) ?? []);
    return [...new Set(upstream)].sort((a, b) => a - b);
  });
}

/** The reverse edges: for each flow, the flows that depend on it. */
function invert(dependencies: readonly number[][]): number[][] {
  const dependents = dependencies.map((): number[] => []);
  dependencies.forEach((upstream, index) => upstream.forEach((dependency) => dependents[dependency]?.push(index)));
  return dependents;
}

function insertSorted(sorted: number[], value: number): void {
  const position = sorted.findIndex((existing) => existing > value);
  sorted.splice(position === -1 ? sorted.length : position, 0, value);
}

/**
 * One cycle per group of flows that all depend on each other (strongly connected component), so a
 * tangle is reported once rather than as every cycle through it. Each cycle starts at the group's
 * first flow and runs in the direction data moves (each flow feeds the next), ordered by that start.
 */
function dependencyCycles(dependencies: readonly number[][]): number[][] {
  const dependents = invert(dependencies);
  return stronglyConnectedComponents(dependents)
    .filter((component) => component.length > 1)
    .map((component) =>
      shortestCycleThrough(
        component.reduce((low, member) => Math.min(low, member)),
        new Set(component),
        dependents,
      ),
    )
    .sort((a, b) => (a[0] ?? 0) - (b[0] ?? 0));
}

/** Shortest path from `start` back to itself inside `members` (breadth first), without repeating `start`. */
function shortestCycleThrough(start: number, members: ReadonlySet<number>, edges: readonly number[][]): number[] {
  const previous = new Map<number, number>();
  const queue = [start];
  for (let head = 0; head < queue.length; head++) {
    const node = queue[head] as number;
    for (const next of edges[node] ?? []) {
      if (!members.has(next)) continue;
      if (next === start) return pathTo(node, previous, start);
      if (previous.has(next)) continue;
      previous.set(next, node);
      queue.push(next);
    }
  }
  return [start]; // Unreachable for a strongly connected component of two or more.
}

function pathTo(end: number, previous: ReadonlyMap<number, number>, start: number): number[] {
  const path = [end];
  while (path[0] !== start) path.unshift(previous.get(path[0] as number) as number);
  return path;
}

/**
 * Tarjan's algorithm, iterative so a long chain of flows cannot overflow the call stack.
 * Returns the components, each a list of node indices.
 */
function stronglyConnectedComponents(edges: readonly number[][]): number[][] {
  const indexOf = new Array<number>(edges.length).fill(-1);
  const lowLink = new Array<number>(edges.length).fill(0);
  const onStack = new Array<boolean>(edges.length).fill(false);
  const stack: number[] = [];
  const components: number[][] = [];
  let nextIndex = 0;
  const visit = (node: number) => {
    indexOf[node] = lowLink[node] = nextIndex++;
    stack.push(node);
    onStack[node] = true;
  };
  for (let root = 0; root < edges.length; root++) {
    if (indexOf[root] !== -1) continue;
    visit(root);
    // Each frame: a node and how many of its edges have been followed.
    const frames: [node: number, edge: number][] = [[root, 0]];
    while (frames.length > 0) {
      const frame = frames.at(-1) as [number, number];
      const [node, edge] = frame;
      const next = edges[node]?.[edge];
      if (next !== undefined) {
        frame[1]++;
        if (indexOf[next] === -1) {
          visit(next);
          frames.push([next, 0]);
        } else if (onStack[next]) {
          lowLink[node] = Math.min(lowLink[node] as number, indexOf[next] as number);
        }
        continue;
      }
      frames.pop();
      const parent = frames.at(-1);
      if (parent) lowLink[parent[0]] = Math.min(lowLink[parent[0]] as number, lowLink[node] as number);
      if (lowLink[node] === indexOf[node]) components.push(popComponent(stack, onStack, node));
    }
  }
  return components;
}

function popComponent(stack: number[], onStack: boolean[], root: number): number[] {
  const component: number[] = [];
  let member: number | undefined;
  do {
    member = stack.pop() as number;
    onStack[member] = false;
    component.push(member);
  } while (member !== root);
  return component;
}
