import { afterEach, describe, expect, test } from 'vitest';
import { applyTemplate } from '#functions/core/templates/apply.ts';
import type { TemplateBundle } from '#functions/core/templates/bundle.ts';
import { loadResources } from '#functions/core/templates/template-repository.ts';
import { db } from '#functions/core/store/dynamo.ts';
import { newClient, newTenant } from '#test/support/api.ts';
import { publish } from '#test/support/templates.ts';

/** A bundle of about 3 × `tables` resources: enough BatchWriteItem calls to fail in the middle. */
function largeBundle(tables: number): TemplateBundle {
  const keys = Array.from({ length: tables }, (_, index) => `t${index}`);
  return {
    nome: 'Large',
    desks: [{ key: 'main', nome: 'Main' }],
    connections: [{ key: 'db', nome: 'DB', kind: 'postgres' }],
    tables: keys.map((key) => ({
      key,
      nome: key,
      desk: 'main',
      columns: [{ column_name: 'id', data_type: 'int', label: 'Id' }],
    })),
    flows: keys.map((key) => ({ key: `load-${key}`, nome: key, connection: 'db', writes: [key], context: 'full' })),
    applications: keys.map((key) => ({ key: `app-${key}`, nome: key, route: `/apps/${key}` })),
  };
}

const injectedFault = 'fail-batch-writes';
afterEach(() => {
  db().middlewareStack.remove(injectedFault);
});

/** Makes every BatchWriteItem after the first `allowed` fail, as a throttled or broken network would. */
function failBatchWritesAfter(allowed: number) {
  let seen = 0;
  db().middlewareStack.add(
    (next, context) => async (args) => {
      if (context.commandName === 'BatchWriteItemCommand' && ++seen > allowed) throw new Error('injected network failure');
      return next(args);
    },
    { step: 'initialize', name: injectedFault },
  );
}

describe('apply converges after a failure half-way', () => {
  test('the retry writes the rest, keeps the ids already given, and plans every table the failed attempt created', async () => {
    const client = await newClient();
    const templateId = await publish(client.token, largeBundle(100));
    const tenant = await newTenant(client.token);

    failBatchWritesAfter(3);
    await expect(applyTemplate(tenant.id, templateId, { deadline: Date.now() + 30_000 })).rejects.toThrow(
      'injected network failure',
    );
    db().middlewareStack.remove(injectedFault);
    const partial = await loadResources(tenant.id);
    expect(partial.length).toBeGreaterThan(0);
    expect(partial.length).toBeLessThan(302);

    const plan = await applyTemplate(tenant.id, templateId, { deadline: Date.now() + 30_000 });
    const after = await loadResources(tenant.id);
    expect(after).toHaveLength(302);
    // Resources written before the failure kept their ids.
    for (const resource of partial) {
      expect(after.find((candidate) => candidate.type === resource.type && candidate.key === resource.key)?.id).toBe(resource.id);
    }
    // Every table was created by one attempt or the other: every flow is in the plan, once.
    expect(plan).toHaveLength(100);
    expect(new Set(plan.map((item) => item.flowId)).size).toBe(100);
    expect(await applyTemplate(tenant.id, templateId, { deadline: Date.now() + 30_000 })).toEqual([]);
  });
});
