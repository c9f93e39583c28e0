/**
 * A rollout's worker stopped right before each of its writes (as if its process died there), then
 * run again once its lease and its applies' locks ran out: the rollout finishes with every tenant
 * on the version, counted once, and no tenant whose outcome committed before the stop is written
 * again (its apply and its outcome commit together, conditioned on the outcome still pending).
 */
import { randomUUID } from 'node:crypto';
import { UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { describe, expect, test } from 'vitest';
import { createClient } from '#functions/core/clients/clients.ts';
import { runRollout } from '#functions/core/rollouts/rollout-runner.ts';
import { findRollout, insertRollout, loadWave, type RolloutRecord } from '#functions/core/rollouts/rollout-repository.ts';
import { getRollout, newRolloutRecord } from '#functions/core/rollouts/rollouts.ts';
import { db, getItem, nextId, tableName } from '#functions/core/store/dynamo.ts';
import * as stored from '#functions/core/store/entity-declarations.ts';
import { publishNextVersion, publishTemplate } from '#functions/core/templates/catalogue.ts';
import { createTenant } from '#functions/core/tenants/tenants.ts';
import { findTenant } from '#functions/core/tenants/tenant-repository.ts';
import { InjectedFault, inParallel, installFaultInjection, newTrace, traced } from '#test/support/faults.ts';
import { bundleOf } from '#test/support/templates.ts';

installFaultInjection();

const flows = [{ key: 'load', writes: ['orders'] }];
const tenantsPerCase = 2;

/** A client, its template at version 2 and two tenants on version 1, and a rollout of version 2 in waves of one (not queued: the test works it). */
async function prepare() {
  const { client } = await createClient(`crash-${randomUUID()}`);
  const clientId = client.clientId;
  const nome = `Retail ${randomUUID()}`;
  const template = await publishTemplate(clientId, bundleOf(nome, flows));
  const tenantIds: number[] = [];
  for (let index = 0; index < tenantsPerCase; index++) {
    const created = await createTenant(
      clientId,
      { nome: `Shop ${index}`, ativo: true, templateId: template.id },
      Date.now() + 15_000,
    );
    tenantIds.push(created.id);
  }
  await publishNextVersion(clientId, template.id, bundleOf(nome, [...flows, { key: 'stock', writes: ['stock'] }]));
  const record = newRolloutRecord({
    clientId,
    templateId: template.id,
    rolloutId: await nextId('rollout'),
    version: 2,
    selection: 'all',
    total: tenantsPerCase,
    waveSize: 1,
    waves: tenantsPerCase,
    pauseSeconds: 0,
    failureBudget: null,
    reload: false,
  });
  expect(await insertRollout(record, undefined, [])).toBe(true);
  return { record, tenantIds };
}

/** The stopped invocation's time-out passed: its lease on the rollout and its lock on a tenant's apply are over. */
async function timeOutStoppedInvocation(record: RolloutRecord, tenantIds: readonly number[]) {
  await db().send(
    new UpdateCommand({
      TableName: tableName(),
      Key: stored.rollout.key(record),
      UpdateExpression: 'SET leaseUntil = :zero',
      ExpressionAttributeValues: { ':zero': 0 },
    }),
  );
  for (const tenantId of tenantIds) {
    await db()
      .send(
        new UpdateCommand({
          TableName: tableName(),
          Key: stored.applyJournal.key({ tenantId }),
          UpdateExpression: 'SET lockedUntil = :zero',
          ConditionExpression: 'attribute_exists(pk)',
          ExpressionAttributeValues: { ':zero': 0 },
        }),
      )
      .catch(() => undefined);
  }
}

/** Works the rollout until it says it is done (no pause between waves: each step goes on at once). */
async function workToTheEnd(record: RolloutRecord): Promise<void> {
  for (let step = 0; step < 20; step++) {
    const next = await runRollout({ clientId: record.clientId, rolloutId: record.rolloutId }, Date.now() + 60_000);
    if (next.kind === 'done') return;
  }
  throw new Error('The rollout did not end in 20 steps');
}

async function recordedTenants(record: RolloutRecord): Promise<number[]> {
  const waves = await Promise.all(Array.from({ length: record.waves }, (_, wave) => loadWave(record.rolloutId, wave)));
  return waves.flat().flatMap((target) => (target.outcome === 'pending' ? [] : [target.tenantId]));
}

async function expectFinished(record: RolloutRecord, tenantIds: readonly number[], after: string) {
  const view = await getRollout(record.clientId, record.templateId, record.rolloutId);
  expect(view.state, after).toBe('finished');
  expect(view.counts, after).toEqual({ pending: 0, applied: tenantsPerCase, unchanged: 0, pending_activation: 0, failed: 0 });
  expect(
    view.waves.map((wave) => wave.counts?.applied),
    after,
  ).toEqual([1, 1]);
  for (const tenantId of tenantIds) expect((await findTenant(tenantId))?.appliedTemplate?.version, after).toBe(2);
  // The template may have another rollout.
  expect((await getItem<{ activeRolloutId?: number }>(stored.template.key(record)))?.activeRolloutId, after).toBeUndefined();
}

describe('a rollout stopped at any write', () => {
  test('resumes to the end, each tenant applied and counted once', async () => {
    const clean = await prepare();
    const cleanTrace = newTrace();
    cleanTrace.plan = { mode: 'fail', at: Number.MAX_SAFE_INTEGER };
    await traced(cleanTrace, () => workToTheEnd(clean.record));
    await expectFinished(clean.record, clean.tenantIds, 'a clean run');
    expect(cleanTrace.writes).toBeGreaterThan(10);

    const cases = Array.from({ length: cleanTrace.writes }, (_, at) => async () => {
      const { record, tenantIds } = await prepare();
      const after = `stopped before write ${at + 1} of ${cleanTrace.writes}`;
      const trace = newTrace();
      trace.plan = { mode: 'kill', at };
      await expect(
        traced(trace, () => workToTheEnd(record)),
        after,
      ).rejects.toBeInstanceOf(InjectedFault);
      const planned = (await findRollout(record.rolloutId))?.planCursor === null;
      const recorded = planned ? await recordedTenants(record) : [];
      await timeOutStoppedInvocation(record, tenantIds);

      const resumed = newTrace();
      await traced(resumed, () => workToTheEnd(record));
      await expectFinished(record, tenantIds, after);
      // Never applied twice: a tenant whose outcome committed before the stop is not written again.
      for (const tenantId of recorded) {
        const key = stored.tenant.key({ tenantId });
        expect(resumed.keys.has(`${key.pk}\u0000${key.sk}`), `${after}: tenant ${tenantId} written again`).toBe(false);
      }
    });
    // Two at a time: each case is a burst of transactions on DynamoDB Local, beside the other test files'.
    await inParallel(cases, 2);
  });
});
