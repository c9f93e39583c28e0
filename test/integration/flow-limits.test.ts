/**
 * A tenant at its limits (functions/core/templates/apply-check.ts, tenantLimits) still applies a
 * template and reloads (the times are printed: on this machine, well inside the route time-out of
 * 15 s; tests assert no times), and an apply that would take it past them is
 * refused, writing nothing. Its flows have the shape that made ordering quadratic: half of them each
 * write the same 50 tables, the other half each read them (2,500 × 2,500 reader-writer pairs, 50
 * tables each, as many as the size limit leaves room for: before ordering was linear, 4,000 such flows of
 * 100 tables took 52 s to apply and 57 s to reload one).
 */
import { describe, expect, test } from 'vitest';
import { ServiceError } from '#functions/core/errors.ts';
import { requestReload } from '#functions/core/reload/reload.ts';
import { applyTemplate } from '#functions/core/templates/apply.ts';
import { resourceBytes, tenantLimits } from '#functions/core/templates/apply-check.ts';
import type { TemplateBundle } from '#functions/core/templates/bundle.ts';
import { loadResources, writeResources } from '#functions/core/templates/template-repository.ts';
import type { StoredResource } from '#functions/core/templates/tenant-resources.ts';
import { newClient, newTenant } from '#test/support/api.ts';
import { publish } from '#test/support/templates.ts';

const shared = Array.from({ length: 50 }, (_, index) => `t${index}`);
const half = tenantLimits.flows / 2;
const writerKey = (index: number) => `w-${index}`;
const readerKey = (index: number) => `r-${index}`;
const outKey = (index: number) => `out-${index}`;
const column = (index: number) => ({ column_name: `c${index}`, data_type: 'integer', label: `Column ${index}` });

/** The size of resources as the limit counts it. */
const sizeOf = (resources: readonly StoredResource[]) =>
  resources.reduce((total, resource) => total + resourceBytes(resource), 0);

/**
 * Every resource of a tenant at its limits, written as an apply writes them (ids far above any a
 * counter gives, so the apply under test never collides with them): the flows above and the tables
 * they name, then tables up to the resource limit, wide enough to fill 95% of the size limit.
 */
function fullTenant(tenantId: number): StoredResource[] {
  let id = 1_000_000;
  const base = (key: string) => ({ tenantId, id: id++, key, nome: key, templateId: 1, changedInVersion: 1 });
  const table = (key: string, columns: number): StoredResource => ({
    type: 'table',
    ...base(key),
    deskKey: 'main',
    columns: Array.from({ length: columns }, (_, index) => ({ id: id++, ...column(index) })),
  });
  const flow = (key: string, reads: string[], writes: string[]): StoredResource => ({
    type: 'flow',
    ...base(key),
    connectionKey: 'db',
    reads,
    writes,
    context: 'full',
  });
  const resources: StoredResource[] = [
    { type: 'desk', ...base('main') },
    { type: 'connection', ...base('db'), kind: 'postgres', agent: 'default', properties: {} },
    ...shared.map((key) => table(key, 1)),
    ...Array.from({ length: half }, (_, index) => flow(writerKey(index), [], shared)),
    ...Array.from({ length: half }, (_, index) => flow(readerKey(index), shared, [outKey(index)])),
    ...Array.from({ length: half }, (_, index) => table(outKey(index), 1)),
  ];
  const padding = Math.min(tenantLimits.resources - resources.length, tenantLimits.tables - shared.length - half);
  const room = tenantLimits.bytes * 0.95 - sizeOf(resources);
  // As many columns as fit in each padding table's share (a column's size grows with its index's digits).
  let columns = 1;
  while (sizeOf([table('wide-0000', columns + 1)]) <= room / padding) columns++;
  resources.push(...Array.from({ length: padding }, (_, index) => table(`wide-${String(index).padStart(4, '0')}`, columns)));
  return resources;
}

/** A template of 1,000 of the tenant's writer flows, changed (another context): it grows nothing. */
function rewriting(): TemplateBundle {
  return {
    nome: 'Rewrite',
    desks: [{ key: 'main', nome: 'main' }],
    connections: [{ key: 'db', nome: 'db', kind: 'postgres' }],
    tables: shared.map((key) => ({ key, nome: key, desk: 'main', columns: [column(0)] })),
    flows: Array.from({ length: 1_000 }, (_, index) => ({
      key: writerKey(index),
      nome: writerKey(index),
      connection: 'db',
      writes: shared,
      context: 'incremental',
    })),
  };
}

async function timed<T>(work: () => Promise<T>): Promise<{ value: T; ms: number }> {
  const started = performance.now();
  const value = await work();
  return { value, ms: performance.now() - started };
}

describe('a tenant at its limits', () => {
  test('applies a 1,000-flow template and reloads; growing past a limit is refused, writing nothing', async () => {
    const client = await newClient();
    const rewrite = await publish(client.token, rewriting());
    const growing = await publish(client.token, {
      nome: 'Growing',
      desks: [{ key: 'main', nome: 'main' }],
      connections: [{ key: 'db', nome: 'db', kind: 'postgres' }],
      tables: [{ key: 'extra', nome: 'extra', desk: 'main', columns: [column(0)] }],
      flows: [{ key: 'extra', nome: 'extra', connection: 'db', writes: ['extra'], context: 'full' }],
    });
    const tenant = await newTenant(client.token);
    const resources = fullTenant(tenant.id);
    await writeResources(resources);
    const size = sizeOf(resources);
    expect(size).toBeGreaterThan(tenantLimits.bytes * 0.9);
    expect(size).toBeLessThan(tenantLimits.bytes);
    expect(resources.length).toBeGreaterThan(tenantLimits.resources * 0.99);

    // DynamoDB Local is a JVM, and the tenant was just written in bulk: its first reads of the
    // partition run several times slower (bench/run.ts warms the twin up for the same reason).
    await loadResources(tenant.id);
    const apply = await timed(() => applyTemplate(tenant.id, rewrite, { deadline: Date.now() + 60_000 }));
    const firstReader = resources.find((resource) => resource.key === readerKey(0)) as StoredResource;
    const reload = await timed(() =>
      requestReload(tenant.id, [{ flowId: firstReader.id, tokenId: 1, context: 'full' }], crypto.randomUUID()),
    );
    console.info(
      `tenant at its limits (${(size / 1e6).toFixed(1)} MB): apply ${apply.ms.toFixed(0)} ms, reload ${reload.ms.toFixed(0)} ms`,
    );
    expect(reload.value).toHaveLength(1);

    const before = (await loadResources(tenant.id)).length;
    let refused: unknown;
    await applyTemplate(tenant.id, growing, { deadline: Date.now() + 60_000 }).catch((error: unknown) => (refused = error));
    expect(refused).toBeInstanceOf(ServiceError);
    expect(refused).toMatchObject({ status: 409, code: 'resource_limit' });
    expect((refused as ServiceError).message).toContain(
      `the tenant would have ${tenantLimits.flows + 1} flows (it has ${tenantLimits.flows}), and may have at most ${tenantLimits.flows}`,
    );
    expect((await loadResources(tenant.id)).length).toBe(before);
  }, 180_000);
});
