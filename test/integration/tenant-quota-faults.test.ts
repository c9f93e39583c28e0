/**
 * The tenant's quota counts stay exact through crashes: the creation and the deletion of users,
 * datamarts, alerts and schedules are run through their routes (in this process, as
 * fault-injection.test.ts runs them) with the store failing their k-th write, or the function stopped
 * right after it, for every k of a clean run, then retried with the same Idempotency-Key. Whatever
 * the crash point, the count (`COUNT#…` in the tenant's partition) ends equal to what is stored, and
 * what is stored is what the clean run left. fault-injection.test.ts compares the count items by key
 * only (its shapes leave values out, as they must for the id counters); this compares their values.
 */
import { randomUUID } from 'node:crypto';
import { beforeAll, describe, expect, test } from 'vitest';
import { createClient } from '#functions/core/clients/clients.ts';
import { getItem, queryAll } from '#functions/core/store/dynamo.ts';
import * as stored from '#functions/core/store/entity-declarations.ts';
import { type FaultMode, inParallel, installFaultInjection, invocationTrace, newTrace, traced } from '#test/support/faults.ts';
import { type Answer, type Call, callRoute } from '#test/support/in-process.ts';
import { scheduleFile } from '#test/support/schedules.ts';
import { retailBundle } from '#test/support/templates.ts';

beforeAll(() => installFaultInjection());

async function ok(call: Call): Promise<Answer> {
  const answer = await callRoute(call);
  if (answer.status >= 300) throw new Error(`${call.method} ${call.path}: ${answer.status} ${JSON.stringify(answer.body)}`);
  return answer;
}

/** A tenant with the retail template (for a flow to schedule), made through the routes. */
async function newTenant(): Promise<{ tenantId: number; token: string; flowId: number }> {
  const { token: client } = await createClient('quota-faults');
  const templateId = (await ok({ method: 'POST', path: '/tenants/templates', token: client, body: retailBundle() })).body.data.id;
  const tenant = (await ok({ method: 'POST', path: '/tenants', token: client, body: { nome: 'Quota', ativo: true, templateId } }))
    .body.data;
  const own = (await ok({ method: 'GET', path: '/tenant', token: tenant.token })).body.data;
  return { tenantId: tenant.id, token: tenant.token, flowId: own.flows[0].id };
}

type Tenant = Awaited<ReturnType<typeof newTenant>>;

interface Kind {
  count: string;
  /** The call that creates one; `index` tells it apart (a schedule's id). */
  create: (tenant: Tenant, index: number) => Call;
  /** The call that deletes the one `created` answered (made with `index`). */
  remove: (tenant: Tenant, created: Answer, index: number) => Call;
  /** How many are stored. */
  stored: (tenantId: number) => Promise<number>;
}

const inPartition = (prefix: string) => async (tenantId: number) =>
  (await queryAll(stored.tenant.partition({ tenantId }), prefix, { projection: 'pk' })).length;

const kinds: Record<string, Kind> = {
  users: {
    count: 'COUNT#USERS',
    create: ({ token }, index) => ({
      method: 'POST',
      path: '/tenant/users',
      token,
      body: { login: `u${index}@q.io`, nome: 'U' },
    }),
    remove: ({ token }, created) => ({ method: 'DELETE', path: `/tenant/users/${created.body.data.id}`, token }),
    stored: inPartition(stored.user.keyPrefix({})),
  },
  datamarts: {
    count: 'COUNT#DATAMARTS',
    create: ({ token }, index) => ({
      method: 'POST',
      path: '/tenant/datamart',
      token,
      body: { nome: `D${index}`, tables: [], owners: [] },
    }),
    remove: ({ token }, created) => ({ method: 'DELETE', path: `/tenant/datamart/${created.body.data.id}`, token }),
    stored: async (tenantId) =>
      (await queryAll(stored.datamart.indexes.gsi1.partition({ tenantId }), '', { index: 'gsi1', projection: 'pk' })).length,
  },
  alerts: {
    count: 'COUNT#ALERTS',
    create: ({ token }, index) => ({
      method: 'POST',
      path: '/tenant/alerts',
      token,
      body: { nome: `A${index}`, channels: { webhook: false }, content: [] },
    }),
    remove: ({ token }, created) => ({ method: 'DELETE', path: `/tenant/alerts/${created.body.data.id}`, token }),
    stored: inPartition(stored.alert.keyPrefix({})),
  },
  schedules: {
    count: 'COUNT#SCHEDULES',
    create: ({ token, flowId }, index) => ({
      method: 'PUT',
      path: `/tenant/schedules/${index}`,
      token,
      body: scheduleFile(index, [flowId]),
    }),
    remove: ({ token }, _created, index) => ({ method: 'DELETE', path: `/tenant/schedules/${index}`, token }),
    stored: inPartition(stored.schedule.keyPrefix({})),
  },
};

/** The deadline a stopped attempt had, and a failed one's: their idempotency claims are free soon after. */
const stoppedTimeoutMs = 1;
const failedTimeoutMs = 50;

/**
 * One case: a tenant with `before` of the kind, then `step` (a creation or a deletion) under `plan`
 * (none: the clean run, counting its writes), its retry with the same key; the count and what is stored.
 */
async function runCase(kind: Kind, step: 'create' | 'remove', plan?: { mode: FaultMode; at: number }) {
  const tenant = await newTenant();
  // A deletion finds the count kept (two created through the routes); a creation starts it.
  const made = step === 'remove' ? [await ok(kind.create(tenant, 1)), await ok(kind.create(tenant, 2))] : [];
  const call = step === 'create' ? kind.create(tenant, 3) : kind.remove(tenant, made[0] as Answer, 1);
  const key = randomUUID();
  const attempt = (timeoutMs?: number) => callRoute({ ...call, headers: { 'idempotency-key': key } }, timeoutMs);
  const trace = newTrace();
  const first = invocationTrace(trace, plan ?? { mode: 'fail', at: Number.POSITIVE_INFINITY });
  const timeoutMs = plan?.mode === 'kill' ? stoppedTimeoutMs : plan ? failedTimeoutMs : undefined;
  let answer = await traced(first, () => attempt(timeoutMs)).catch(() => undefined);
  if (plan) {
    await new Promise((resolve) => setTimeout(resolve, failedTimeoutMs + 10));
    answer = await attempt();
  }
  const count = (await getItem<{ value: number }>({ pk: stored.tenant.partition({ tenantId: tenant.tenantId }), sk: kind.count }))
    ?.value;
  return { status: answer?.status, count, stored: await kind.stored(tenant.tenantId), writes: first.writes };
}

describe.each(Object.keys(kinds))('%s', (name) => {
  const kind = kinds[name] as Kind;
  test.each(['create', 'remove'] as const)(
    '%s, stopped or failing after any write, then retried: the count equals what is stored, as in a clean run',
    async (step) => {
      const clean = await runCase(kind, step);
      expect(clean.status).toBeLessThan(300);
      // One made, or one of two deleted: one left.
      expect(clean).toMatchObject({ count: 1, stored: 1 });
      const plans = (['kill', 'fail'] as const).flatMap((mode) =>
        Array.from({ length: clean.writes }, (_, index) => ({ mode, at: index + 1 })),
      );
      const outcomes = await inParallel(plans.map((plan) => () => runCase(kind, step, plan)));
      // A POST creation honours the Idempotency-Key: its retry answers what the first attempt did. A retried DELETE
      // finds its work done (404), a retried PUT the schedule there (200): no status above 4xx, either way.
      const replayed = step === 'create' && kind.create({ tenantId: 0, token: '', flowId: 0 }, 0).method === 'POST';
      outcomes.forEach((outcome, index) => {
        const label = `${plans[index]?.mode} at write ${plans[index]?.at}`;
        expect(outcome.status, label).toBeLessThan(500);
        if (replayed) expect(outcome.status, label).toBe(clean.status);
        expect({ count: outcome.count, stored: outcome.stored }, label).toEqual({ count: clean.stored, stored: clean.stored });
      });
    },
    120_000,
  );
});
