/**
 * The order of a tenant's flows (functions/core/templates/bundle.ts, `orderFlows`) against a tiny
 * reference: the quadratic algorithm it replaced, kept here verbatim in spirit (reader × writer
 * pairs materialised, a sorted ready list, Tarjan's components, a breadth-first shortest cycle).
 * For any set of flows the linear ordering must give the same order when there is no cycle, and
 * report exactly the same cycles when there is one.
 */
import fc from 'fast-check';
import { describe, expect, test } from 'vitest';
import { ServiceError } from '#functions/core/errors.ts';
import { flowDependencyOrder, orderFlows } from '#functions/core/templates/bundle.ts';
import { expectBelow, expectEqual, expectSame } from '#test/support/loop-expect.ts';

interface Flow {
  key: string;
  reads?: string[];
  writes: string[];
}

// ---- the reference: the algorithm as it was before ordering became linear ----------------------

function referenceDependencies(flows: readonly Flow[]): number[][] {
  const writersByTable = new Map<string, number[]>();
  flows.forEach((flow, index) => {
    for (const table of new Set(flow.writes)) writersByTable.set(table, [...(writersByTable.get(table) ?? []), index]);
  });
  return flows.map((flow) => {
    const own = new Set(flow.writes);
    const upstream = (flow.reads ?? []).filter((table) => !own.has(table)).flatMap((table) => writersByTable.get(table) ?? []);
    return [...new Set(upstream)].sort((a, b) => a - b);
  });
}

const referenceInvert = (dependencies: readonly number[][]) => {
  const dependents = dependencies.map((): number[] => []);
  dependencies.forEach((upstream, index) => upstream.forEach((dependency) => dependents[dependency]?.push(index)));
  return dependents;
};

/** Recursive Tarjan: fine for the small sets the property generates. */
function referenceComponents(edges: readonly number[][]): number[][] {
  const indexOf = new Map<number, number>();
  const low = new Map<number, number>();
  const stack: number[] = [];
  const onStack = new Set<number>();
  const components: number[][] = [];
  let next = 0;
  const visit = (node: number) => {
    indexOf.set(node, next);
    low.set(node, next++);
    stack.push(node);
    onStack.add(node);
    for (const to of edges[node] ?? []) {
      if (!indexOf.has(to)) {
        visit(to);
        low.set(node, Math.min(low.get(node) as number, low.get(to) as number));
      } else if (onStack.has(to)) low.set(node, Math.min(low.get(node) as number, indexOf.get(to) as number));
    }
    if (low.get(node) === indexOf.get(node)) {
      const component: number[] = [];
      let member: number;
      do {
        member = stack.pop() as number;
        onStack.delete(member);
        component.push(member);
      } while (member !== node);
      components.push(component);
    }
  };
  edges.forEach((_, node) => indexOf.has(node) || visit(node));
  return components;
}

function referenceShortestCycle(start: number, members: ReadonlySet<number>, edges: readonly number[][]): number[] {
  const previous = new Map<number, number>();
  const queue = [start];
  for (let head = 0; head < queue.length; head++) {
    const node = queue[head] as number;
    for (const next of edges[node] ?? []) {
      if (!members.has(next)) continue;
      if (next === start) {
        const path = [node];
        while (path[0] !== start) path.unshift(previous.get(path[0] as number) as number);
        return path;
      }
      if (previous.has(next)) continue;
      previous.set(next, node);
      queue.push(next);
    }
  }
  throw new Error('no cycle through a component of two or more');
}

/** The old `flowDependencyOrder`: the order, or the cycles (as flow indices) when there is none. */
function reference(flows: readonly Flow[]): { ordered: number[] } | { cycles: number[][] } {
  const dependencies = referenceDependencies(flows);
  const dependents = referenceInvert(dependencies);
  const pending = dependencies.map((upstream) => upstream.length);
  const ready = pending.flatMap((count, index) => (count === 0 ? [index] : []));
  const ordered: number[] = [];
  while (ready.length > 0) {
    const next = ready.shift() as number;
    ordered.push(next);
    for (const dependent of dependents[next] ?? []) {
      pending[dependent] = (pending[dependent] ?? 0) - 1;
      if (pending[dependent] === 0) {
        const at = ready.findIndex((existing) => existing > dependent);
        ready.splice(at === -1 ? ready.length : at, 0, dependent);
      }
    }
  }
  if (ordered.length === flows.length) return { ordered };
  const cycles = referenceComponents(dependents)
    .filter((component) => component.length > 1)
    .map((component) => referenceShortestCycle(Math.min(...component), new Set(component), dependents))
    .sort((a, b) => (a[0] as number) - (b[0] as number));
  return { cycles };
}

// ---- generators -----------------------------------------------------------------------------

/** Flows over a few tables, so that shared tables, self-reads, repeats and cycles all come up often. */
const flowSets = (tables: number, maxFlows: number) =>
  fc
    .array(
      fc.record({
        reads: fc.option(fc.array(fc.integer({ min: 0, max: tables - 1 }), { maxLength: 5 }), { nil: undefined }),
        writes: fc.array(fc.integer({ min: 0, max: tables - 1 }), { maxLength: 4 }),
      }),
      { maxLength: maxFlows },
    )
    .map((drafts) =>
      drafts.map(({ reads, writes }, index): Flow => ({
        key: `f${index}`,
        ...(reads === undefined ? {} : { reads: reads.map((table) => `t${table}`) }),
        writes: writes.map((table) => `t${table}`),
      })),
    );

/** Acyclic by construction: flow i writes only tables above every table it reads. Then shuffled. */
const acyclicFlowSets = fc
  .array(fc.tuple(fc.integer({ min: 0, max: 20 }), fc.integer({ min: 1, max: 5 }), fc.integer({ min: 0, max: 3 })), {
    maxLength: 25,
  })
  .chain((shapes) =>
    fc.shuffledSubarray(
      shapes.map(([level, span, reads], index): Flow => ({
        key: `f${index}`,
        reads: Array.from({ length: reads }, (_, offset) => `t${Math.max(0, level - 1 - offset * 2)}`).filter(
          (table) => Number(table.slice(1)) < level,
        ),
        writes: Array.from({ length: span }, (_, offset) => `t${level + offset}`),
      })),
      { minLength: shapes.length, maxLength: shapes.length },
    ),
  );

const indicesOf = (flows: readonly Flow[], ordered: readonly Flow[]) => ordered.map((flow) => flows.indexOf(flow));

// ---- properties -----------------------------------------------------------------------------

describe('orderFlows equals the reference', () => {
  test('any flows: the same order without a cycle, the same cycles with one', () => {
    fc.assert(
      fc.property(flowSets(6, 14), (flows) => {
        const expected = reference(flows);
        const actual = orderFlows(flows);
        if ('ordered' in expected) {
          expectSame('ordered' in actual, true);
          if ('ordered' in actual) expectEqual(indicesOf(flows, actual.ordered), expected.ordered);
        } else {
          expectEqual(actual, { cycles: expected.cycles });
        }
      }),
      { numRuns: 3000 },
    );
  });

  test('acyclic flows of many shapes come out in the reference order, every reader after its writers', () => {
    fc.assert(
      fc.property(acyclicFlowSets, (flows) => {
        const expected = reference(flows);
        expectSame('ordered' in expected, true);
        const ordered = flowDependencyOrder(flows);
        if ('ordered' in expected) expectEqual(indicesOf(flows, ordered), expected.ordered);
        const position = new Map(ordered.map((flow, index) => [flow, index]));
        for (const reader of flows) {
          for (const table of reader.reads ?? []) {
            if (reader.writes.includes(table)) continue;
            for (const writer of flows.filter((flow) => flow.writes.includes(table))) {
              expectBelow(position.get(writer) as number, position.get(reader) as number);
            }
          }
        }
      }),
      { numRuns: 1000 },
    );
  });

  test('dense tangles (many writers and readers of the same tables) give the reference cycles', () => {
    fc.assert(
      fc.property(flowSets(3, 30), (flows) => {
        const expected = reference(flows);
        const actual = orderFlows(flows);
        expectEqual('cycles' in actual ? actual.cycles : 'ordered', 'cycles' in expected ? expected.cycles : 'ordered');
      }),
      { numRuns: 1000 },
    );
  });
});

describe('a cycle found when ordering', () => {
  test('is a 409 flow_cycle naming the flows of the cycle, never a plain error (a 500)', () => {
    const flows = [
      { key: 'free', reads: [], writes: ['t9'] },
      { key: 'fa', reads: ['t0'], writes: ['t1'] },
      { key: 'fb', reads: ['t1'], writes: ['t0'] },
    ];
    let thrown: unknown;
    try {
      flowDependencyOrder(flows);
    } catch (error) {
      thrown = error;
    }
    expect(thrown).toBeInstanceOf(ServiceError);
    expect(thrown).toMatchObject({ status: 409, code: 'flow_cycle' });
    expect((thrown as ServiceError).message).toMatch(/^flows form a dependency cycle: fa → fb → fa/);
    expect((thrown as ServiceError).errors.map((error) => error.message)).toEqual([
      'flows form a dependency cycle: fa → fb → fa',
    ]);
  });
});

describe('ordering cost is linear in reads plus writes', () => {
  /** `writers` flows each writing t0..t99 and `readers` flows each reading them: writers × readers pairs, 200 references a pair. */
  const bipartite = (writers: number, readers: number): Flow[] => {
    const tables = Array.from({ length: 100 }, (_, index) => `t${index}`);
    return [
      ...Array.from({ length: readers }, (_, index) => ({ key: `r${index}`, reads: tables, writes: [`out${index}`] })),
      ...Array.from({ length: writers }, (_, index) => ({ key: `w${index}`, reads: [], writes: tables })),
    ];
  };

  // What these cost is measured by `npm run bench -- parsers` (the "flow dependency order" row, n
  // and 2n in one run): the quadratic ordering took about 57 s here (400 million reader × writer
  // pairs), so at this size these tests are also the class's example.
  test('2,000 writers and 2,000 readers of the same 100 tables: every writer before every reader', () => {
    const ordered = flowDependencyOrder(bipartite(2_000, 2_000));
    expect(ordered.slice(0, 2_000).every((flow) => flow.key.startsWith('w'))).toBe(true);
    expect(ordered.slice(2_000).every((flow) => flow.key.startsWith('r'))).toBe(true);
  });

  test('a tangle of the same size with a cycle names that cycle', () => {
    const flows = bipartite(2_000, 2_000);
    flows.push({ key: 'back', reads: ['out0'], writes: ['t0'] });
    expect(orderFlows(flows)).toEqual({ cycles: [[0, 4_000]] });
  });
});
