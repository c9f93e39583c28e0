/**
 * An apply combines a template's flows with the flows the tenant already has (from other templates,
 * or from earlier versions of the same one). The combination is checked before anything is written:
 * an apply that would leave the tenant's flows in a dependency cycle is a 409 `flow_cycle` that
 * writes nothing; and a tenant that holds a cycle anyway (data from before the check, or the mix an
 * apply leaves when it stops half-way) answers reloads and schedule fires 409 `flow_cycle`, never a
 * 500, until an apply that breaks the cycle goes through.
 */
import { describe, expect, test } from 'vitest';
import { ServiceError } from '#functions/core/errors.ts';
import { requestReload, startFlows } from '#functions/core/reload/reload.ts';
import { applyTemplate } from '#functions/core/templates/apply.ts';
import { loadResources, loadResourcesOfType, writeResources } from '#functions/core/templates/template-repository.ts';
import type { StoredOf } from '#functions/core/templates/tenant-resources.ts';
import { findTenant } from '#functions/core/tenants/tenant-repository.ts';
import { api, newClient, newTenant } from '#test/support/api.ts';
import { bundleOf, publish } from '#test/support/templates.ts';

const deadline = () => Date.now() + 30_000;

/** What the promise rejects with (it must reject). */
async function refusal(promise: Promise<unknown>): Promise<ServiceError> {
  try {
    await promise;
  } catch (error) {
    if (error instanceof ServiceError) return error;
    throw new Error(`expected a ServiceError (a 4xx), got ${String(error)}`, { cause: error });
  }
  throw new Error('expected a refusal');
}

/** The tenant's resources as comparable rows. */
const snapshot = async (tenantId: number) => (await loadResources(tenantId)).map((resource) => JSON.stringify(resource)).sort();

const flowNamed = async (tenantId: number, key: string) =>
  (await loadResourcesOfType(tenantId, 'flow')).find((flow) => flow.key === key) as StoredOf<'flow'>;

describe('an apply that would close a flow cycle across templates', () => {
  test('is refused with 409 flow_cycle naming the cycle, writes nothing, and leaves the tenant working', async () => {
    const client = await newClient();
    const a = await publish(client.token, bundleOf('Template A', [{ key: 'fa', reads: ['t0'], writes: ['t1'] }]));
    const b = await publish(
      client.token,
      bundleOf('Template B', [{ key: 'fb', reads: ['t1'], writes: ['t0'] }], {
        applications: [{ key: 'b-app', nome: 'B', route: '/apps/b' }],
      }),
    );
    const tenant = await newTenant(client.token);
    await applyTemplate(tenant.id, a, { deadline: deadline() });
    const before = await snapshot(tenant.id);

    const refused = await refusal(applyTemplate(tenant.id, b, { deadline: deadline() }));
    expect(refused).toMatchObject({ status: 409, code: 'flow_cycle' });
    expect(refused.message).toContain('fa → fb → fa');
    expect(refused.errors).toEqual([
      expect.objectContaining({ pointer: '/templateId', message: expect.stringContaining('fa → fb → fa') }),
    ]);
    // Nothing written, and the lock released: the tenant keeps applying and reloading.
    expect(await snapshot(tenant.id)).toEqual(before);
    expect((await findTenant(tenant.id))?.appliedTemplate).toMatchObject({ templateId: a });
    expect(await applyTemplate(tenant.id, a, { deadline: deadline() })).toEqual([]);
    const fa = await flowNamed(tenant.id, 'fa');
    const results = await requestReload(tenant.id, [{ flowId: fa.id, tokenId: 1, context: 'full' }], crypto.randomUUID());
    expect(results).toEqual([expect.objectContaining({ flowId: fa.id, tenantId: tenant.id })]);
  });

  test('two versions of one template: the new version is acyclic alone but not with the flows the old one left', async () => {
    const client = await newClient();
    const template = await publish(client.token, bundleOf('Versions', [{ key: 'fa', reads: ['t0'], writes: ['t1'] }]));
    const tenant = await newTenant(client.token);
    await applyTemplate(tenant.id, template, { deadline: deadline() });
    const next = await api('PUT', `/tenants/templates/${template}`, {
      token: client.token,
      body: bundleOf('Versions', [{ key: 'fb', reads: ['t1'], writes: ['t0'] }]),
    });
    expect(next.status).toBe(200);
    const before = await snapshot(tenant.id);

    const refused = await refusal(applyTemplate(tenant.id, template, { deadline: deadline() }));
    expect(refused).toMatchObject({ status: 409, code: 'flow_cycle' });
    expect(refused.message).toContain('fa → fb → fa');
    expect(await snapshot(tenant.id)).toEqual(before);
  });

  test('an apply that changes a flow so that the combination is acyclic goes through', async () => {
    const client = await newClient();
    const a = await publish(client.token, bundleOf('Acyclic A', [{ key: 'fa', reads: ['t0'], writes: ['t1'] }]));
    // fb reads what fa writes and writes a table fa does not read: a chain, not a cycle.
    const b = await publish(client.token, bundleOf('Acyclic B', [{ key: 'fb', reads: ['t1'], writes: ['t2'] }]));
    const tenant = await newTenant(client.token);
    await applyTemplate(tenant.id, a, { deadline: deadline() });
    const plan = await applyTemplate(tenant.id, b, { deadline: deadline() });
    const fb = await flowNamed(tenant.id, 'fb');
    expect(plan.map((item) => item.flowId)).toEqual([fb.id]);
  });
});

describe('a tenant that already holds a cycle', () => {
  /** Writes fa and fb as a cycle straight into the tenant, as data from before the check could be. */
  async function tenantWithCycle() {
    const client = await newClient();
    const a = await publish(
      client.token,
      bundleOf('Cycle A', [
        { key: 'fa', reads: ['t0'], writes: ['t1'] },
        { key: 'free', writes: ['t9'] },
      ]),
    );
    const tenant = await newTenant(client.token);
    await applyTemplate(tenant.id, a, { deadline: deadline() });
    const fa = await flowNamed(tenant.id, 'fa');
    const fb: StoredOf<'flow'> = { ...fa, id: fa.id + 1000, key: 'fb', nome: 'fb', reads: ['t1'], writes: ['t0'] };
    await writeResources([fb]);
    return { client, tenant, a, fa, fb, free: await flowNamed(tenant.id, 'free') };
  }

  test('answers a reload 409 flow_cycle naming the cycle (not a 500), queueing nothing', async () => {
    const { tenant, free } = await tenantWithCycle();
    const refused = await refusal(
      requestReload(tenant.id, [{ flowId: free.id, tokenId: 1, context: 'full' }], crypto.randomUUID()),
    );
    expect(refused).toMatchObject({ status: 409, code: 'flow_cycle' });
    expect(refused.message).toContain('fa → fb → fa');
  });

  test('starting its flows for a schedule is a 409 flow_cycle too (the fire worker records a failed run and retries)', async () => {
    const { tenant, free } = await tenantWithCycle();
    const record = await findTenant(tenant.id);
    if (!record) throw new Error('tenant missing');
    const refused = await refusal(startFlows(record, [{ flowId: free.id, context: 'full' }], crypto.randomUUID()));
    expect(refused).toMatchObject({ status: 409, code: 'flow_cycle' });
  });

  test('refuses an apply that keeps the cycle, and takes one that breaks it, after which reloads work again', async () => {
    const { client, tenant, a, free } = await tenantWithCycle();
    const keeps = await refusal(applyTemplate(tenant.id, a, { deadline: deadline() }));
    expect(keeps).toMatchObject({ status: 409, code: 'flow_cycle' });

    // A template that redefines fb so that it no longer writes what fa reads.
    const fix = await publish(client.token, bundleOf('Fix', [{ key: 'fb', reads: ['t1'], writes: ['t2'] }]));
    await applyTemplate(tenant.id, fix, { deadline: deadline() });
    const results = await requestReload(tenant.id, [{ flowId: free.id, tokenId: 1, context: 'full' }], crypto.randomUUID());
    expect(results).toEqual([expect.objectContaining({ flowId: free.id })]);
  });
});
