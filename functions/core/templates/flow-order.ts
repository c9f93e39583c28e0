/**
 * The dependency order of flows, in time linear in their reads plus writes. Flow B depends on flow A
 * when B reads a table A writes (a read of a table the flow writes itself is its own earlier output,
 * an incremental load, and no dependency). Rather than listing every such (reader, writer) pair,
 * which W writers and R readers of the same 100 tables make W × R × 100 of, the flows and tables
 * form one bipartite graph: flow → each table it writes → each flow that reads it (and does not
 * write it). A table is complete once all its writers are placed; a flow is ready once every table
 * it depends on is complete: the same moments at which it would be ready in the flow graph, so the
 * order is the same. Pure, iterative (no recursion a long chain could overflow).
 */

/** The shape ordering needs: bundle flows and the flows stored in a tenant both have it. */
export interface OrderableFlow {
  key: string;
  reads?: readonly string[];
  writes: readonly string[];
}

/**
 * The flows in an order where each comes after the flows that write the tables it reads; among
 * flows free to run, the lowest input position first (so the same flows always load in the same
 * order). When they form dependency cycles there is no such order: `cycles` then holds one cycle
 * per group of flows that all depend on each other (strongly connected component), as input
 * positions in the direction data moves (each flow feeds the next), starting at the group's first
 * flow, ordered by that start.
 */
export function orderFlows<T extends OrderableFlow>(flows: readonly T[]): { ordered: T[] } | { cycles: number[][] } {
  const graph = flowGraph(flows);
  const placed = kahn(graph);
  if (placed.length === flows.length) return { ordered: placed.map((index) => flows[index] as T) };
  return { cycles: cyclesAmong(graph, placed) };
}

/**
 * Flows are nodes 0..n-1 by input position, tables nodes n.. in order of first mention. Each list
 * holds distinct nodes, ascending for the readers of a table.
 */
interface FlowGraph {
  flowCount: number;
  /** For each flow, the tables it writes. */
  writes: number[][];
  /** For each table (by table number, node - flowCount), the flows that read it and do not write it. */
  readers: number[][];
  /** For each flow, how many distinct tables it depends on (read, not written by itself, written by some flow). */
  dependsOn: number[];
  /** For each table, how many distinct flows write it. */
  writerCount: number[];
}

function flowGraph(flows: readonly OrderableFlow[]): FlowGraph {
  const tableNumbers = new Map<string, number>();
  const tableNumber = (key: string) => {
    let number = tableNumbers.get(key);
    if (number === undefined) {
      number = tableNumbers.size;
      tableNumbers.set(key, number);
    }
    return number;
  };
  // Marks of the last flow that saw a table, so a table a flow names twice counts once.
  const seenBy: number[] = [];
  const writtenBy: number[] = [];
  const writes = flows.map((flow, index) => {
    const tables: number[] = [];
    for (const key of flow.writes) {
      const table = tableNumber(key);
      if (writtenBy[table] === index) continue;
      writtenBy[table] = index;
      tables.push(table);
    }
    return tables;
  });
  const writerCount = new Array<number>(tableNumbers.size).fill(0);
  for (const tables of writes) for (const table of tables) writerCount[table] = (writerCount[table] ?? 0) + 1;
  const readers: number[][] = [];
  const dependsOn = flows.map((flow, index) => {
    // The flow's own tables are seen already: reading one is an incremental load, no dependency.
    for (const table of writes[index] ?? []) seenBy[table] = index;
    let count = 0;
    for (const key of flow.reads ?? []) {
      const table = tableNumbers.get(key);
      // A table no flow writes (it has no number) holds nobody back.
      if (table === undefined || seenBy[table] === index) continue;
      seenBy[table] = index;
      (readers[table] ??= []).push(index);
      count++;
    }
    return count;
  });
  return { flowCount: flows.length, writes, readers, dependsOn, writerCount };
}

/** Kahn's algorithm, the ready flows in a binary heap by position: the flows placed, in order. */
function kahn(graph: FlowGraph): number[] {
  const pendingTables = [...graph.dependsOn];
  const pendingWriters = [...graph.writerCount];
  const ready = new MinHeap();
  pendingTables.forEach((count, flow) => count === 0 && ready.push(flow));
  const placed: number[] = [];
  while (ready.size > 0) {
    const flow = ready.pop();
    placed.push(flow);
    for (const table of graph.writes[flow] ?? []) {
      pendingWriters[table] = (pendingWriters[table] ?? 0) - 1;
      if (pendingWriters[table] !== 0) continue;
      for (const reader of graph.readers[table] ?? []) {
        pendingTables[reader] = (pendingTables[reader] ?? 0) - 1;
        if (pendingTables[reader] === 0) ready.push(reader);
      }
    }
  }
  return placed;
}

class MinHeap {
  private readonly items: number[] = [];

  get size(): number {
    return this.items.length;
  }

  push(value: number): void {
    const items = this.items;
    let at = items.push(value) - 1;
    while (at > 0) {
      const parent = (at - 1) >> 1;
      if ((items[parent] as number) <= value) break;
      items[at] = items[parent] as number;
      at = parent;
    }
    items[at] = value;
  }

  pop(): number {
    const items = this.items;
    const top = items[0] as number;
    const last = items.pop() as number;
    if (items.length === 0) return top;
    let at = 0;
    for (;;) {
      let child = 2 * at + 1;
      if (child >= items.length) break;
      if (child + 1 < items.length && (items[child + 1] as number) < (items[child] as number)) child++;
      if ((items[child] as number) >= last) break;
      items[at] = items[child] as number;
      at = child;
    }
    items[at] = last;
    return top;
  }
}

// ---- cycles -----------------------------------------------------------------------------------

/**
 * The cycles among the flows Kahn's algorithm could not place (those in a cycle and those after
 * one): strongly connected components of the bipartite graph restricted to them (a component's
 * flows are exactly a component of the flow graph), then a shortest cycle through each.
 */
function cyclesAmong(graph: FlowGraph, placed: readonly number[]): number[][] {
  const nodeCount = graph.flowCount + graph.writerCount.length;
  const included = new Array<boolean>(nodeCount).fill(false);
  for (let flow = 0; flow < graph.flowCount; flow++) included[flow] = true;
  for (const flow of placed) included[flow] = false;
  // A table is in play while one of its writers is not placed; the others are complete.
  for (let flow = 0; flow < graph.flowCount; flow++) {
    if (included[flow]) for (const table of graph.writes[flow] ?? []) included[graph.flowCount + table] = true;
  }
  const edges = (node: number): readonly number[] =>
    node < graph.flowCount
      ? (graph.writes[node] ?? []).map((table) => graph.flowCount + table)
      : (graph.readers[node - graph.flowCount] ?? []);
  const component = stronglyConnectedComponents(nodeCount, included, edges);
  const starts = new Map<number, number>(); // component → its first flow
  const flowCounts = new Map<number, number>();
  for (let flow = 0; flow < graph.flowCount; flow++) {
    const id = component[flow] as number;
    if (id === -1) continue;
    if (!starts.has(id)) starts.set(id, flow);
    flowCounts.set(id, (flowCounts.get(id) ?? 0) + 1);
  }
  // A component of one flow is no cycle: a flow never depends on a table it writes.
  return [...starts]
    .filter(([id]) => (flowCounts.get(id) ?? 0) > 1)
    .map(([id, start]) => shortestCycleThrough(graph, start, component, id))
    .sort((a, b) => (a[0] as number) - (b[0] as number));
}

/**
 * Shortest cycle from `start` back to itself inside its component, breadth first over flows. As
 * the flow graph's search did: each flow's next flows are taken in ascending position, and each
 * is reached first from the earliest flow in the queue that leads to it. A table is expanded once:
 * its readers are all reached the first time. Only the component's tables are expanded (a table
 * between two flows of a component is in it), so the search is linear in the component's edges.
 */
function shortestCycleThrough(graph: FlowGraph, start: number, component: readonly number[], id: number): number[] {
  const previous = new Map<number, number>();
  const expanded = new Set<number>();
  const queue = [start];
  for (let head = 0; head < queue.length; head++) {
    const flow = queue[head] as number;
    const next: number[] = [];
    for (const table of graph.writes[flow] ?? []) {
      if (component[graph.flowCount + table] !== id || expanded.has(table)) continue;
      expanded.add(table);
      for (const reader of graph.readers[table] ?? []) {
        if (reader === start) return pathTo(flow, previous, start);
        if (component[reader] === id && !previous.has(reader)) next.push(reader);
      }
    }
    next.sort((a, b) => a - b);
    for (const reader of next) {
      if (previous.has(reader)) continue;
      previous.set(reader, flow);
      queue.push(reader);
    }
  }
  return [start]; // Unreachable for a component of two or more flows.
}

function pathTo(end: number, previous: ReadonlyMap<number, number>, start: number): number[] {
  const path = [end];
  while (path[path.length - 1] !== start) path.push(previous.get(path[path.length - 1] as number) as number);
  return path.reverse();
}

/**
 * Tarjan's algorithm, iterative so a long chain cannot overflow the call stack, over the nodes
 * `included`. For each node, the id of its component (-1 for nodes left out).
 */
function stronglyConnectedComponents(
  nodeCount: number,
  included: readonly boolean[],
  edges: (node: number) => readonly number[],
): number[] {
  const indexOf = new Array<number>(nodeCount).fill(-1);
  const lowLink = new Array<number>(nodeCount).fill(0);
  const onStack = new Array<boolean>(nodeCount).fill(false);
  const component = new Array<number>(nodeCount).fill(-1);
  const stack: number[] = [];
  let nextIndex = 0;
  let components = 0;
  const visit = (node: number) => {
    indexOf[node] = lowLink[node] = nextIndex++;
    stack.push(node);
    onStack[node] = true;
  };
  for (let root = 0; root < nodeCount; root++) {
    if (!included[root] || indexOf[root] !== -1) continue;
    visit(root);
    // Each frame: a node, its edges, and how many of them have been followed.
    const frames: [node: number, targets: readonly number[], edge: number][] = [[root, edges(root), 0]];
    while (frames.length > 0) {
      const frame = frames[frames.length - 1] as [number, readonly number[], number];
      const [node, targets, edge] = frame;
      if (edge < targets.length) {
        frame[2]++;
        const next = targets[edge] as number;
        if (!included[next]) continue;
        if (indexOf[next] === -1) {
          visit(next);
          frames.push([next, edges(next), 0]);
        } else if (onStack[next]) {
          lowLink[node] = Math.min(lowLink[node] as number, indexOf[next] as number);
        }
        continue;
      }
      frames.pop();
      const parent = frames[frames.length - 1];
      if (parent) lowLink[parent[0]] = Math.min(lowLink[parent[0]] as number, lowLink[node] as number);
      if (lowLink[node] === indexOf[node]) {
        let member: number;
        do {
          member = stack.pop() as number;
          onStack[member] = false;
          component[member] = components;
        } while (member !== node);
        components++;
      }
    }
  }
  return component;
}
