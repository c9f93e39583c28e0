/**
 * The quotas on what a client creates (functions/core/clients/quotas.ts) hold under concurrency:
 * live tenants and templates are counts that the creating transaction conditions on, a template's
 * versions its record's `latestVersion`, which the next version's update conditions on. Run here
 * against DynamoDB Local: through the repositories with small maximums (they take them), and
 * through the routes (in this process) with the count put just under the real maximum. Deletions
 * free places, and the tenant count stays exact through a creation with a template stopped or
 * failed after any of its writes and retried with its Idempotency-Key. (A client whose tenants or
 * templates an earlier version made before the counts were kept: migration-counts.test.ts.)
 */
import { randomUUID } from 'node:crypto';
import { UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { beforeAll, describe, expect, test } from 'vitest';
import { hashToken, newToken } from '#functions/core/auth/tokens.ts';
import { clientCountKey, type ClientCountName, findClientCount } from '#functions/core/clients/client-repository.ts';
import { createClient } from '#functions/core/clients/clients.ts';
import { maxTemplatesPerClient, maxTenantsPerClient, maxVersionsPerTemplate } from '#functions/core/clients/quotas.ts';
import { db, queryAll, tableName } from '#functions/core/store/dynamo.ts';
import * as stored from '#functions/core/store/entity-declarations.ts';
import {
  allocateTemplateId,
  deleteTemplateRecord,
  findTemplate,
  insertNextVersion,
  insertTemplate,
  type TemplateRecord,
} from '#functions/core/templates/template-repository.ts';
import {
  allocateTenantId,
  findTenant,
  insertTenant,
  softDeleteTenant,
  type TenantRecord,
} from '#functions/core/tenants/tenant-repository.ts';
import { installFaultInjection, invocationTrace, newTrace, traced } from '#test/support/faults.ts';
import { type Answer, type Call, callRoute } from '#test/support/in-process.ts';
import { retailBundle } from '#test/support/templates.ts';

beforeAll(() => installFaultInjection());

const at = <T>(count: number, make: (index: number) => Promise<T>) =>
  Promise.all(Array.from({ length: count }, (_, index) => make(index)));
const tally = (values: Array<string | number | boolean>) =>
  values.reduce<Record<string, number>>(
    (counts, value) => ({ ...counts, [String(value)]: (counts[String(value)] ?? 0) + 1 }),
    {},
  );

async function freshClient() {
  const { client, token } = await createClient(`quota-client-${randomUUID()}`);
  return { clientId: client.clientId, token };
}

/** Puts a client's count where a test wants it (a client near its quota without thousands of writes). */
const setCount = (clientId: number, name: ClientCountName, value: number) =>
  db().send(
    new UpdateCommand({
      TableName: tableName(),
      Key: clientCountKey(clientId, name),
      UpdateExpression: 'SET #value = :value',
      ExpressionAttributeNames: { '#value': 'value' },
      ExpressionAttributeValues: { ':value': value },
    }),
  );

/** The client's live tenants, as its list shows them (the index, which a deletion leaves). */
const liveTenants = (clientId: number) =>
  queryAll<TenantRecord>(stored.tenant.indexes.gsi1.partition({ clientId }), '', { index: 'gsi1' });
const templatesOf = (clientId: number) =>
  queryAll<TemplateRecord>(stored.template.partition({ clientId }), stored.template.keyPrefix({}));

async function tenantRecord(clientId: number, nome = 'Quota'): Promise<{ tenant: TenantRecord; token: string }> {
  const tenantId = await allocateTenantId();
  const token = await newToken('tenant', { clientId, tenantId });
  const now = new Date().toISOString();
  const tenant: TenantRecord = {
    tenantId,
    clientId,
    nome,
    ativo: true,
    dominio: `quota-${tenantId}.localhost`,
    developmentVariables: {},
    tokenHash: hashToken(token),
    createdAt: now,
    updatedAt: now,
  };
  return { tenant, token };
}

const json = (method: string, path: string, token: string, body?: unknown): Call => ({ method, path, token, body });

describe('live tenants per client', () => {
  test('40 creations at once where 10 fit: exactly 10; a deletion frees one place, once', async () => {
    const { clientId } = await freshClient();
    const made = await at(40, () => tenantRecord(clientId));
    const outcomes = await at(40, (index) =>
      insertTenant(made[index]?.tenant as TenantRecord, made[index]?.token as string, [], 10),
    );
    expect(tally(outcomes)).toEqual({ written: 10, limit: 30 });
    expect(await liveTenants(clientId)).toHaveLength(10);
    expect(await findClientCount(clientId, 'TENANTS')).toBe(10);

    const kept = made.filter((_, index) => outcomes[index] === 'written');
    const victim = (await findTenant(kept[0]?.tenant.tenantId as number)) as TenantRecord;
    expect(await softDeleteTenant(victim, new Date().toISOString())).toBe(true);
    // Deleting it again is refused by the tenant's own condition: the count loses it once.
    expect(await softDeleteTenant(victim, new Date().toISOString())).toBe(false);
    expect(await findClientCount(clientId, 'TENANTS')).toBe(9);

    const more = await at(5, () => tenantRecord(clientId));
    const again = await at(5, (index) => insertTenant(more[index]?.tenant as TenantRecord, more[index]?.token as string, [], 10));
    expect(tally(again)).toEqual({ written: 1, limit: 4 });
    expect(await liveTenants(clientId)).toHaveLength(10);
    expect(await findClientCount(clientId, 'TENANTS')).toBe(10);
  });

  test(`through the route: 40 creations at once with 10 places left of ${maxTenantsPerClient}: 10 made, 30 refused 409 tenant_quota`, async () => {
    const client = await freshClient();
    const templateId = (await callRoute(json('POST', '/tenants/templates', client.token, retailBundle()))).body.data.id as number;
    await setCount(client.clientId, 'TENANTS', maxTenantsPerClient - 10);
    // Half of them with a template: the two-step creation is counted in its first step.
    const answers = await at(40, (index) =>
      callRoute(
        json('POST', '/tenants', client.token, { nome: `Edge ${index}`, ativo: true, ...(index % 2 ? { templateId } : {}) }),
      ),
    );
    expect(tally(answers.map((answer) => answer.status))).toEqual({ 201: 10, 409: 30 });
    for (const refused of answers.filter((answer) => answer.status === 409)) {
      expect(refused.body).toMatchObject({ code: 'tenant_quota', message: expect.stringContaining('10,000') });
    }
    expect(await liveTenants(client.clientId)).toHaveLength(10);
    expect(await findClientCount(client.clientId, 'TENANTS')).toBe(maxTenantsPerClient);

    const made = answers.find((answer) => answer.status === 201)?.body.data.id as number;
    expect((await callRoute(json('DELETE', '/tenants', client.token, { id: made }))).status).toBe(200);
    expect(await findClientCount(client.clientId, 'TENANTS')).toBe(maxTenantsPerClient - 1);
    const after = await at(5, (index) =>
      callRoute(json('POST', '/tenants', client.token, { nome: `After ${index}`, ativo: true })),
    );
    expect(tally(after.map((answer) => answer.status))).toEqual({ 201: 1, 409: 4 });
    expect(await findClientCount(client.clientId, 'TENANTS')).toBe(maxTenantsPerClient);
  }, 60_000);
});

/**
 * A writing route that changes a client's count, stopped or failed after any of its writes, then
 * retried (with its Idempotency-Key, after the stopped attempt's deadline): the counts equal what
 * they count. A creation with a template is two steps, with a checkpoint between them.
 */
describe('counts through a stop or a store failure after any write, and the retry', () => {
  type Party = { clientId: number; token: string; templateId: number; tenantId: number };
  const scenarios: Record<string, (party: Party) => Call> = {
    'POST /tenants with a template': (p) =>
      json('POST', '/tenants', p.token, { nome: 'Resumed', ativo: true, templateId: p.templateId }),
    'DELETE /tenants': (p) => json('DELETE', '/tenants', p.token, { id: p.tenantId }),
    'POST /tenants/templates': (p) => json('POST', '/tenants/templates', p.token, { ...retailBundle(), nome: 'Another' }),
    'DELETE /tenants/templates/{id}': (p) => json('DELETE', `/tenants/templates/${p.templateId}`, p.token),
  };

  async function party(): Promise<Party> {
    const client = await freshClient();
    const templateId = (await callRoute(json('POST', '/tenants/templates', client.token, retailBundle()))).body.data.id as number;
    const tenantId = (await callRoute(json('POST', '/tenants', client.token, { nome: 'Party', ativo: true }))).body.data
      .id as number;
    return { ...client, templateId, tenantId };
  }

  /** One case: the call under `plan` (none: a clean run, which counts its writes), its retry, then the counts and what they count. */
  async function runCase(scenario: (party: Party) => Call, plan?: { mode: 'kill' | 'fail'; at: number }) {
    const p = await party();
    const key = randomUUID();
    const call = scenario(p);
    const attempt = (timeoutMs?: number) => callRoute({ ...call, headers: { 'idempotency-key': key } }, timeoutMs);
    const first = invocationTrace(newTrace(), plan ?? { mode: 'fail', at: Number.POSITIVE_INFINITY });
    let answer: Answer | undefined = await traced(first, () => attempt(plan ? 50 : undefined)).catch(() => undefined);
    if (plan) {
      await new Promise((resolve) => setTimeout(resolve, 60));
      answer = await attempt();
    }
    return {
      writes: first.writes,
      status: answer?.status,
      tenants: { count: await findClientCount(p.clientId, 'TENANTS'), live: (await liveTenants(p.clientId)).length },
      templates: { count: await findClientCount(p.clientId, 'TEMPLATES'), kept: (await templatesOf(p.clientId)).length },
    };
  }

  test.each(Object.keys(scenarios))(
    '%s: the counts equal what they count, whichever write the first attempt stopped at',
    async (name) => {
      const scenario = scenarios[name] as (party: Party) => Call;
      const clean = await runCase(scenario);
      expect(clean.status).toBeLessThan(300);
      expect(clean.tenants.count).toBe(clean.tenants.live);
      expect(clean.templates.count).toBe(clean.templates.kept);
      const plans = (['kill', 'fail'] as const).flatMap((mode) =>
        Array.from({ length: clean.writes }, (_, index) => ({ mode, at: index + 1 })),
      );
      const outcomes = await at(plans.length, (index) => runCase(scenario, plans[index]));
      outcomes.forEach((outcome, index) => {
        const label = `${plans[index]?.mode} at write ${plans[index]?.at}`;
        expect({ tenants: outcome.tenants, templates: outcome.templates }, label).toEqual({
          tenants: clean.tenants,
          templates: clean.templates,
        });
        // A creation's retry replays or resumes it; a deletion takes no key, and its retry may find it done (404).
        const expected = name.startsWith('DELETE') ? [clean.status, 404] : [clean.status];
        expect(expected, label).toContain(outcome.status);
      });
    },
    120_000,
  );
});

describe('templates per client', () => {
  const bundleNamed = (nome: string) => ({ ...retailBundle(), nome });

  test('30 publications at once where 10 fit: exactly 10; a deletion frees one place, once', async () => {
    const { clientId } = await freshClient();
    const ids = await at(30, () => allocateTemplateId());
    const outcomes = await at(30, (index) => insertTemplate(clientId, ids[index] as number, bundleNamed(`T${index}`), [], 10));
    expect(tally(outcomes)).toEqual({ written: 10, limit: 20 });
    expect(await templatesOf(clientId)).toHaveLength(10);
    expect(await findClientCount(clientId, 'TEMPLATES')).toBe(10);

    const kept = (await templatesOf(clientId))[0] as TemplateRecord;
    expect(await deleteTemplateRecord(kept, [])).toBe(true);
    expect(await deleteTemplateRecord(kept, [])).toBe(false);
    expect(await findClientCount(clientId, 'TEMPLATES')).toBe(9);
    const more = await at(5, () => allocateTemplateId());
    const again = await at(5, (index) => insertTemplate(clientId, more[index] as number, bundleNamed(`U${index}`), [], 10));
    expect(tally(again)).toEqual({ written: 1, limit: 4 });
    expect(await findClientCount(clientId, 'TEMPLATES')).toBe(10);
  });

  test(`through the route: 30 publications at once with 10 places left of ${maxTemplatesPerClient}: 10 made, 20 refused 409 template_limit`, async () => {
    const client = await freshClient();
    await setCount(client.clientId, 'TEMPLATES', maxTemplatesPerClient - 10);
    const answers = await at(30, (index) =>
      callRoute(json('POST', '/tenants/templates', client.token, bundleNamed(`Edge ${index}`))),
    );
    expect(tally(answers.map((answer) => answer.status))).toEqual({ 201: 10, 409: 20 });
    for (const refused of answers.filter((answer) => answer.status === 409)) {
      expect(refused.body).toMatchObject({ code: 'template_limit', message: expect.stringContaining('1,000') });
    }
    expect(await templatesOf(client.clientId)).toHaveLength(10);
    expect(await findClientCount(client.clientId, 'TEMPLATES')).toBe(maxTemplatesPerClient);

    const made = answers.find((answer) => answer.status === 201)?.body.data.id as number;
    expect((await callRoute(json('DELETE', `/tenants/templates/${made}`, client.token))).status).toBe(200);
    expect(await findClientCount(client.clientId, 'TEMPLATES')).toBe(maxTemplatesPerClient - 1);
    const after = await at(5, (index) =>
      callRoute(json('POST', '/tenants/templates', client.token, bundleNamed(`After ${index}`))),
    );
    expect(tally(after.map((answer) => answer.status))).toEqual({ 201: 1, 409: 4 });
  }, 60_000);
});

describe('versions per template', () => {
  test('with a maximum of 3: versions 2 and 3, then the update refuses a fourth', async () => {
    const { clientId } = await freshClient();
    const templateId = await allocateTemplateId();
    expect(await insertTemplate(clientId, templateId, { ...retailBundle(), nome: 'Versioned' }, [], 10)).toBe('written');
    for (const version of [2, 3]) {
      const template = (await findTemplate(clientId, templateId)) as TemplateRecord;
      expect(await insertNextVersion(template, { ...retailBundle(), nome: `Versioned ${version}` }, 3)).toMatchObject({
        latestVersion: version,
      });
    }
    const template = (await findTemplate(clientId, templateId)) as TemplateRecord;
    expect(await insertNextVersion(template, { ...retailBundle(), nome: 'Versioned 4' }, 3)).toBe('limit');
    expect(await insertNextVersion(template, { ...retailBundle(), nome: 'Versioned 3' }, 3)).toBe('limit');
    expect((await findTemplate(clientId, templateId))?.latestVersion).toBe(3);
  });

  test(`through the route: 30 new versions at once of a template at ${maxVersionsPerTemplate - 1}: one made, 29 refused 409 template_version_limit`, async () => {
    const client = await freshClient();
    const templateId = (await callRoute(json('POST', '/tenants/templates', client.token, retailBundle()))).body.data.id as number;
    await db().send(
      new UpdateCommand({
        TableName: tableName(),
        Key: stored.template.key({ clientId: client.clientId, templateId }),
        UpdateExpression: 'SET latestVersion = :version',
        ExpressionAttributeValues: { ':version': maxVersionsPerTemplate - 1 },
      }),
    );
    const bundleOf = (index: number) => ({ ...retailBundle(), desks: [{ key: 'sales', nome: `Sales ${index}` }] });
    const answers = await at(30, (index) =>
      callRoute(json('PUT', `/tenants/templates/${templateId}`, client.token, bundleOf(index))),
    );
    expect(tally(answers.map((answer) => answer.status))).toEqual({ 200: 1, 409: 29 });
    for (const refused of answers.filter((answer) => answer.status === 409)) {
      expect(refused.body).toMatchObject({ code: 'template_version_limit', message: expect.stringContaining('1,000') });
    }
    expect((await findTemplate(client.clientId, templateId))?.latestVersion).toBe(maxVersionsPerTemplate);
    // The latest bundle sent again is no new version: still answered.
    const winner = answers.findIndex((answer) => answer.status === 200);
    const again = await callRoute(json('PUT', `/tenants/templates/${templateId}`, client.token, bundleOf(winner)));
    expect(again).toMatchObject({ status: 200, body: { data: { version: maxVersionsPerTemplate } } });
  }, 60_000);
});
