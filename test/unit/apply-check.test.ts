/**
 * What an apply combines with the tenant's resources, checked before anything is written
 * (functions/core/templates/apply-check.ts): a combination later operations would refuse (flows in
 * a cycle, a tenant past its limits) is refused; every other combination is valid.
 */
import fc from 'fast-check';
import { describe, expect, test } from 'vitest';
import { maxBodyBytes } from '#functions/core/api/request-body.ts';
import { ServiceError } from '#functions/core/errors.ts';
import { applyRefusal, type TenantLimits, tenantLimits } from '#functions/core/templates/apply-check.ts';
import { flowDependencyOrder, orderFlows, type TemplateBundle } from '#functions/core/templates/bundle.ts';
import { bundleOf } from '#test/support/templates.ts';
import {
  computeChanges,
  type IdCounter,
  mergeResources,
  newIdsNeeded,
  type StoredResource,
} from '#functions/core/templates/tenant-resources.ts';

let nextId = 1;
/** The tenant after applying `bundle` over `current`, as the apply writes it (its new ids all `id`, when given). */
function applied(bundle: TemplateBundle, current: StoredResource[] = [], templateId = 1, id?: number): StoredResource[] {
  const fresh = Object.fromEntries(
    Object.entries(newIdsNeeded(bundle, current)).map(([counter, count]) => [
      counter,
      Array.from({ length: count }, () => id ?? nextId++),
    ]),
  ) as Record<IdCounter, number[]>;
  return mergeResources(current, computeChanges(7, { templateId, version: 1 }, bundle, current, fresh).changed);
}

const refusalOf = (bundle: TemplateBundle, current: StoredResource[], limits: TenantLimits = tenantLimits) =>
  applyRefusal(7, { templateId: 2, version: 1 }, bundle, current, limits);

describe('flows combined across templates', () => {
  const a = bundleOf('A', [{ key: 'fa', reads: ['t0'], writes: ['t1'] }]);
  const b = bundleOf('B', [{ key: 'fb', reads: ['t1'], writes: ['t0'] }]);

  test('a cycle closed by the new template is a 409 flow_cycle naming it, at /templateId', () => {
    const refusal = refusalOf(b, applied(a));
    expect(refusal).toBeInstanceOf(ServiceError);
    expect(refusal).toMatchObject({ status: 409, code: 'flow_cycle' });
    expect(refusal?.message).toMatch(
      /^Template 2 \(version 1\) was not applied, nothing was written: with the flows the tenant has, flows form a dependency cycle: fa → fb → fa;/,
    );
    expect(refusal?.errors).toEqual([
      { location: 'body', pointer: '/templateId', message: 'flows form a dependency cycle: fa → fb → fa' },
    ]);
  });

  test('a template that overwrites a flow of another so that the cycle is gone is taken', () => {
    const tenant = applied(a);
    const breaking = bundleOf('B', [
      { key: 'fb', reads: ['t1'], writes: ['t0'] },
      // fa, overwritten by this template, no longer reads t0.
      { key: 'fa', writes: ['t1'] },
    ]);
    expect(refusalOf(breaking, tenant)).toBeUndefined();
  });

  test('a tenant already in a cycle refuses an apply that keeps it and takes one that ends it', () => {
    const cyclic = [...applied(a), ...applied(b, [], 9).filter((resource) => resource.type === 'flow')];
    expect(() => flowDependencyOrder(cyclic.filter((resource) => resource.type === 'flow'))).toThrow(
      'flows form a dependency cycle: fa → fb → fa',
    );
    expect(refusalOf(a, cyclic)).toMatchObject({ code: 'flow_cycle' });
    expect(refusalOf(bundleOf('Fix', [{ key: 'fb', reads: ['t1'], writes: ['t2'] }]), cyclic)).toBeUndefined();
  });

  test('keys shared across templates overwrite; a flow reading a table no flow writes is valid', () => {
    const first = applied(bundleOf('One', [{ key: 'load', reads: ['source'], writes: ['t1'] }]));
    const second = bundleOf('Two', [
      { key: 'load', reads: ['source'], writes: ['t1', 't2'] },
      { key: 'report', reads: ['t2'], writes: ['t3'] },
    ]);
    expect(refusalOf(second, first)).toBeUndefined();
  });

  test('property: an apply is refused for a cycle exactly when the flows it would leave cannot be ordered', () => {
    const flow = fc.record({
      key: fc.constantFrom('f0', 'f1', 'f2', 'f3', 'f4', 'f5'),
      reads: fc.uniqueArray(fc.constantFrom('t0', 't1', 't2', 't3'), { maxLength: 3 }),
      writes: fc.uniqueArray(fc.constantFrom('t0', 't1', 't2', 't3'), { minLength: 1, maxLength: 2 }),
    });
    const template = fc.uniqueArray(flow, { selector: ({ key }) => key, maxLength: 4 });
    fc.assert(
      fc.property(fc.array(template, { minLength: 1, maxLength: 4 }), (templates) => {
        // Each template alone is acyclic (publishing refuses the others).
        const publishable = templates.filter((flows) => 'ordered' in orderFlows(flows));
        let tenant: StoredResource[] = [];
        publishable.forEach((flows, index) => {
          const bundle = bundleOf(`T${index}`, flows);
          const refusal = refusalOf(bundle, tenant);
          const after = applied(bundle, tenant, index + 1);
          const cyclic = 'cycles' in orderFlows(after.filter((resource) => resource.type === 'flow'));
          expect(refusal?.code === 'flow_cycle').toBe(cyclic);
          if (!refusal) tenant = after;
        });
        // Whatever was applied, the tenant's flows can always be ordered.
        expect(() => flowDependencyOrder(tenant.filter((resource) => resource.type === 'flow'))).not.toThrow();
      }),
      { numRuns: 500 },
    );
  });
});

describe('tenant limits', () => {
  const small = { flows: 3, tables: 4, resources: 12, bytes: 1_000_000 };
  const chain = (prefix: string, count: number) =>
    Array.from({ length: count }, (_, index) => ({ key: `${prefix}${index}`, writes: [`${prefix}t${index}`] }));

  test('an apply adding flows past the limit is a 409 resource_limit naming it', () => {
    const tenant = applied(bundleOf('A', chain('a', 2)));
    const refusal = refusalOf(bundleOf('B', chain('b', 2)), tenant, small);
    expect(refusal).toMatchObject({ status: 409, code: 'resource_limit' });
    expect(refusal?.message).toContain('the tenant would have 4 flows (it has 2), and may have at most 3');
    // 4 tables is at the limit, not past it.
    expect(refusal?.errors).toEqual([
      { location: 'body', pointer: '/templateId', message: 'the tenant would have 4 flows (it has 2), and may have at most 3' },
    ]);
  });

  test('every limit passed is listed, and the size limit counts the resources as an answer carries them', () => {
    const tenant = applied(bundleOf('A', chain('a', 2)));
    const bundle = bundleOf('B', chain('b', 3));
    // Their JSON, each quote and backslash counted twice.
    const bytes = (resources: StoredResource[]) =>
      resources.reduce((total, resource) => {
        const json = JSON.stringify(resource);
        return total + Buffer.byteLength(json) + (json.match(/["\\]/g)?.length ?? 0);
      }, 0);
    // New resources count as stored with a one-digit id: their ids are not taken yet.
    const [before, after] = [bytes(tenant), bytes(applied(bundle, tenant, 2, 0))];
    const refusal = refusalOf(bundle, tenant, { ...small, bytes: after - 1 });
    expect(refusal?.errors.map((error) => error.message)).toEqual([
      'the tenant would have 5 flows (it has 2), and may have at most 3',
      'the tenant would have 5 tables (it has 2), and may have at most 4',
      `the tenant would have ${after} bytes of template resources (as an answer carries them) (it has ${before}), and may have at most ${after - 1}`,
    ]);
    expect(refusalOf(bundle, tenant, { ...tenantLimits, bytes: after })).toBeUndefined();
  });

  test('re-applying what the tenant has, or overwriting it, is taken even past a limit (nothing grows)', () => {
    const bundle = bundleOf('A', chain('a', 5));
    const tenant = applied(bundle);
    expect(refusalOf(bundle, tenant, small)).toBeUndefined();
    const renamed = { ...bundle, flows: bundle.flows?.map((flow) => ({ ...flow, context: 'incremental' })) };
    expect(refusalOf(renamed, tenant, small)).toBeUndefined();
  });

  test('any one template fits in a new tenant', () => {
    // The bundle schema's maximum per kind is 1,000; the body limit 1,000,000 bytes of JSON, which an answer carries in
    // twice that at most (each quote and backslash escaped once more), beside each resource's own fields.
    expect(tenantLimits.flows).toBeGreaterThanOrEqual(1_000);
    expect(tenantLimits.tables).toBeGreaterThanOrEqual(1_000);
    expect(tenantLimits.resources).toBeGreaterThanOrEqual(6_000);
    expect(tenantLimits.bytes).toBeGreaterThan(2 * maxBodyBytes + 1024 * 1024);
  });
});
