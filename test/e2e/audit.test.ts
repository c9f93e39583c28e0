/**
 * The audit trail through the shared twin (real HTTP, DynamoDB Local): a tenant's changes listed
 * newest first with who, what and which request, filtered, exported as NDJSON; the client's trail
 * with its tenants'; another tenant's records never shown; concurrent changes to one tenant making
 * one chain without gaps; the admin CLI's changes recorded as an operator's; and `audit verify`
 * naming the first link a tampered or removed record breaks; an agent's run reports in its own chain,
 * kept as long as the runs. That every writing route leaves
 * exactly one record per change is proven route by route, from the route table, in
 * test/integration/fault-injection.test.ts (its clean runs).
 */
import { DeleteCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { expect, inject, test } from 'vitest';
import { type AuditRecord, recordHash } from '#functions/core/audit/audit-record.ts';
import { hashToken } from '#functions/core/auth/tokens.ts';
import { recordDispatchedRun } from '#functions/core/reload/runs.ts';
import { db, getItem, tableName } from '#functions/core/store/dynamo.ts';
import * as stored from '#functions/core/store/entity-declarations.ts';
import { expiresAt } from '#functions/core/store/retention.ts';
import { api, expectErrorEnvelope, getOk, newClient, newTenant } from '#test/support/api.ts';
import { runToEnd } from '#test/support/processes.ts';
import { agentToken, publish, retailBundle } from '#test/support/templates.ts';

/** An audit record as the routes answer it. */
type Listed = {
  chain: string;
  seq: number;
  at: string;
  actor: { kind: string; clientId?: number; tenantId?: number; agentId?: number; tokenId?: string; name?: string };
  action: string;
  resource: { type: string; id?: string };
  fields: string[];
  requestId: string;
  viewerAddress?: string;
  prevHash: string;
  hash: string;
};

const againstTable = { TABLE_NAME: process.env.TABLE_NAME, DYNAMODB_ENDPOINT: inject('dynamodbEndpoint') };

async function auditOf(path: string, token: string): Promise<Listed[]> {
  return (await getOk(path, token)).body.data;
}

async function tenantWithChanges() {
  const client = await newClient();
  const tenant = await newTenant(client.token);
  const created = await api('POST', '/tenant/users', {
    token: tenant.token,
    body: { login: `ana-${crypto.randomUUID().slice(0, 8)}`, nome: 'Ana', email: 'ana@example.com' },
    headers: { 'x-request-id': 'audit-test-create-user' },
  });
  expect(created.status).toBe(201);
  const userId = created.body.data.id as number;
  expect((await api('PATCH', `/tenant/users/${userId}`, { token: tenant.token, body: { nome: 'Ana Maria' } })).status).toBe(200);
  return { client, tenant, userId };
}

test("a tenant's changes, newest first: who, what (field names, never values), which request, in one chain", async () => {
  const { client, tenant, userId } = await tenantWithChanges();
  const records = await auditOf('/tenant/audit', tenant.token);
  expect(records.map((record) => record.action)).toEqual(['PATCH /tenant/users/{id}', 'POST /tenant/users', 'POST /tenants']);
  const [patched, createdUser, createdTenant] = records as [Listed, Listed, Listed];
  expect(createdUser).toMatchObject({
    chain: `tenant:${tenant.id}`,
    actor: { kind: 'tenant', clientId: client.clientId, tenantId: tenant.id, tokenId: hashToken(tenant.token).slice(0, 16) },
    resource: { type: 'user', id: String(userId) },
    fields: ['email', 'login', 'nome'],
    requestId: 'audit-test-create-user',
  });
  expect(patched).toMatchObject({ resource: { type: 'user', id: String(userId) }, fields: ['nome'] });
  // The client's creation of the tenant starts the tenant's chain, made with the client's token.
  expect(createdTenant).toMatchObject({
    seq: 1,
    actor: { kind: 'client', clientId: client.clientId },
    resource: { id: String(tenant.id) },
  });
  // No value of the body is kept anywhere in a record: not the e-mail, not the new name.
  expect(JSON.stringify(records)).not.toMatch(/ana@example|Ana Maria/);
  // One chain: seq 1, 2, 3, each linking to the one before by its hash.
  expect(records.map((record) => record.seq)).toEqual([3, 2, 1]);
  for (const record of records) expect(recordHash(record as unknown as AuditRecord)).toBe(record.hash);
  expect(patched.prevHash).toBe(createdUser.hash);
  expect(createdUser.prevHash).toBe(createdTenant.hash);
  expect(createdTenant.prevHash).toBe('0'.repeat(64));
});

test('filters by resource, resource id, actor and time, paged; refused when malformed', async () => {
  const { tenant, userId } = await tenantWithChanges();
  const actions = async (query: string) => (await auditOf(`/tenant/audit?${query}`, tenant.token)).map((record) => record.action);
  expect(await actions('resource=user')).toEqual(['PATCH /tenant/users/{id}', 'POST /tenant/users']);
  expect(await actions(`resource=user&resourceId=${userId}`)).toHaveLength(2);
  expect(await actions('resource=user&resourceId=999999')).toEqual([]);
  expect(await actions('actor=client')).toEqual(['POST /tenants']);
  expect(await actions('actor=agent')).toEqual([]);
  expect(await actions('from=2000-01-01&to=2000-12-31')).toEqual([]);
  expect(await actions(`from=${new Date(Date.now() - 3_600_000).toISOString()}`)).toHaveLength(3);
  const first = await getOk('/tenant/audit?limit=2', tenant.token);
  expect(first.body.data).toHaveLength(2);
  const rest = await getOk(`/tenant/audit?limit=2&cursor=${encodeURIComponent(first.body.nextCursor)}`, tenant.token);
  expect(rest.body.data.map((record: Listed) => record.seq)).toEqual([1]);
  expect(rest.body.nextCursor).toBeNull();
  for (const [query, parameter] of [
    ['resource=users', 'resource'],
    ['actor=robot', 'actor'],
    ['from=yesterday', 'from'],
    ['to=2026-13-45T99:00:00Z', 'to'],
  ]) {
    const refused = expectErrorEnvelope(await api('GET', `/tenant/audit?${query}`, { token: tenant.token }), 400);
    expect(
      refused.errors.map((error: { pointer: string }) => error.pointer),
      query,
    ).toEqual([`/${parameter}`]);
  }
});

test('exported as NDJSON (Accept: application/x-ndjson): one record per line, the next page in X-Next-Cursor', async () => {
  const { tenant } = await tenantWithChanges();
  const accept = { accept: 'application/x-ndjson' };
  const page = await api('GET', '/tenant/audit?limit=2', { token: tenant.token, headers: accept });
  expect(page.status).toBe(200);
  expect(page.headers.get('content-type')).toMatch(/^application\/x-ndjson/);
  const lines = String(page.body)
    .trimEnd()
    .split('\n')
    .map((line) => JSON.parse(line) as Listed);
  expect(lines.map((record) => record.seq)).toEqual([3, 2]);
  const cursor = page.headers.get('x-next-cursor');
  expect(cursor).toBeTruthy();
  const last = await api('GET', `/tenant/audit?limit=2&cursor=${encodeURIComponent(cursor ?? '')}`, {
    token: tenant.token,
    headers: accept,
  });
  expect(
    String(last.body)
      .trimEnd()
      .split('\n')
      .map((line) => (JSON.parse(line) as Listed).seq),
  ).toEqual([1]);
  expect(last.headers.get('x-next-cursor')).toBeNull();
});

test("the client's trail holds its own chain and its tenants'; another tenant's or client's records never show", async () => {
  const { client, tenant } = await tenantWithChanges();
  const other = await tenantWithChanges();
  // The client's own change (a template) is in its own chain.
  await publish(client.token, retailBundle());
  const records = await auditOf('/tenants/audit', client.token);
  expect(records.map((record) => [record.chain, record.action])).toEqual([
    [`client:${client.clientId}`, 'POST /tenants/templates'],
    [`tenant:${tenant.id}`, 'PATCH /tenant/users/{id}'],
    [`tenant:${tenant.id}`, 'POST /tenant/users'],
    [`tenant:${tenant.id}`, 'POST /tenants'],
  ]);
  const own = await auditOf(`/tenants/audit?tenantId=${tenant.id}&resource=tenant`, client.token);
  expect(own.map((record) => record.action)).toEqual(['POST /tenants']);
  expect(await auditOf(`/tenants/audit?tenantId=${other.tenant.id}`, client.token)).toEqual([]);
  expect(JSON.stringify(await auditOf('/tenant/audit', other.tenant.token))).not.toContain(`tenant:${tenant.id}`);
});

test("an agent's reports racing one another make one chain without gaps or forks", async () => {
  const client = await newClient();
  const tenant = await newTenant(client.token);
  const agent = await agentToken(tenant.token);
  for (let flowId = 1; flowId <= 10; flowId++) {
    const batchId = crypto.randomUUID();
    const load = { tenantId: tenant.id, agentId: 1, flowId, context: 'full', requestedAt: new Date().toISOString() };
    expect(await recordDispatchedRun({ ...load, batchId, deduplicationId: `${batchId}-${flowId}` })).toBe('recorded');
  }
  const runs = (await getOk('/tenant/runs', tenant.token)).body.data as Array<{ id: number }>;
  const answers = await Promise.all(
    runs.map((run) => api('POST', `/agent/runs/${run.id}`, { token: agent, body: { status: 'succeeded' } })),
  );
  expect(answers.map((answer) => answer.status)).toEqual(runs.map(() => 200));
  const records = await auditOf('/tenant/audit?agent=1&limit=100', tenant.token);
  expect(records.map((record) => record.seq)).toEqual(Array.from({ length: 10 }, (_, index) => 10 - index));
  const byId = (a: number, b: number) => a - b;
  expect(records.map((record) => Number(record.resource.id)).sort(byId)).toEqual(runs.map((run) => run.id).sort(byId));
  for (const [index, record] of records.slice(0, -1).entries()) expect(record.prevHash).toBe(records[index + 1]?.hash);
});

test('changes racing on one tenant make one chain without gaps or forks', async () => {
  const client = await newClient();
  const tenant = await newTenant(client.token);
  const logins = Array.from({ length: 12 }, (_, index) => `racer-${index}-${crypto.randomUUID().slice(0, 6)}`);
  const answers = await Promise.all(
    logins.map((login) =>
      api('POST', '/tenant/users', {
        token: tenant.token,
        body: { login, nome: login, email: `${login}@example.com` },
      }),
    ),
  );
  expect(answers.map((answer) => answer.status)).toEqual(logins.map(() => 201));
  const records = await auditOf('/tenant/audit?limit=100', tenant.token);
  expect(records.map((record) => record.seq)).toEqual(Array.from({ length: 13 }, (_, index) => 13 - index));
  for (const [index, record] of records.slice(0, -1).entries()) expect(record.prevHash).toBe(records[index + 1]?.hash);
  const verified = await runToEnd('bin/admin.ts', ['audit', 'verify', '--tenant', String(tenant.id), '--json'], againstTable);
  expect(verified.code, verified.output).toBe(0);
  expect(JSON.parse(verified.output.trim())).toMatchObject({ chain: `tenant:${tenant.id}`, records: 13, headSeq: 13 });
});

test("audit verify names the first link a tampered or removed record breaks; the admin CLI's changes are an operator's", async () => {
  const { tenant } = await tenantWithChanges();
  const verify = () => runToEnd('bin/admin.ts', ['audit', 'verify', '--tenant', String(tenant.id)], againstTable);
  const clean = await verify();
  expect(clean.code, clean.output).toBe(0);
  expect(clean.output).toContain('every link holds');
  const chain = { owner: 'tenant', ownerId: tenant.id } as const;
  // Someone with write access to the table changes what the second record says was set.
  await db().send(
    new UpdateCommand({
      TableName: tableName(),
      Key: stored.auditRecord.key({ ...chain, seq: 2 }),
      UpdateExpression: 'SET #fields = :fields',
      ExpressionAttributeNames: { '#fields': 'fields' },
      ExpressionAttributeValues: { ':fields': ['nome'] },
    }),
  );
  const tampered = await verify();
  expect(tampered.code).toBe(1);
  expect(tampered.output).toContain('broken at seq 2: its content does not match its hash');
  // Removing it instead leaves a gap the next record names.
  await db().send(new DeleteCommand({ TableName: tableName(), Key: stored.auditRecord.key({ ...chain, seq: 2 }) }));
  const removed = await verify();
  expect(removed.code).toBe(1);
  expect(removed.output).toContain('broken at seq 3: it follows seq 1: 1 records missing');

  const created = await runToEnd(
    'bin/admin.ts',
    ['client', 'create', '--name', 'Audited', '--operator', 'ops-ana', '--json'],
    againstTable,
  );
  expect(created.code, created.output).toBe(0);
  const { id, token } = JSON.parse(created.output.trim()) as { id: number; token: string };
  const rotated = await runToEnd('bin/admin.ts', ['client', 'rotate-token', '--id', String(id), '--json'], againstTable);
  expect(rotated.code, rotated.output).toBe(0);
  const fresh = (JSON.parse(rotated.output.trim()) as { token: string }).token;
  const records = await auditOf('/tenants/audit', fresh);
  expect(records.map((record) => [record.action, record.actor.kind, record.resource])).toEqual([
    ['admin client rotate-token', 'operator', { type: 'client', id: String(id) }],
    ['admin client create', 'operator', { type: 'client', id: String(id) }],
  ]);
  expect(records[1]?.actor.name).toBe('ops-ana');
  expect(records[1]?.fields).toEqual(['name']);
  expect(JSON.stringify(records)).not.toContain(token);
});

test("an agent's run reports make the agent's own chain, kept as long as the runs, read with agent= and verified", async () => {
  const client = await newClient();
  const tenant = await newTenant(client.token);
  const agent = await agentToken(tenant.token);
  // Two runs of the default agent, written as the reload worker writes them.
  for (const flowId of [11, 12]) {
    const batchId = crypto.randomUUID();
    const load = { tenantId: tenant.id, agentId: 1, flowId, context: 'full', requestedAt: new Date().toISOString() };
    expect(await recordDispatchedRun({ ...load, batchId, deduplicationId: `${batchId}-${flowId}` })).toBe('recorded');
  }
  const [second, first] = (await getOk('/tenant/runs', tenant.token)).body.data as [{ id: number }, { id: number }];
  const report = (runId: number, body: object) => api('POST', `/agent/runs/${runId}`, { token: agent, body });
  expect((await report(first.id, { status: 'running' })).status).toBe(200);
  expect((await report(first.id, { status: 'succeeded', message: 'loaded 12 rows' })).status).toBe(200);
  expect((await report(second.id, { status: 'failed' })).status).toBe(200);
  // A refused report (the run is finished) changes nothing, and records nothing.
  expect((await report(second.id, { status: 'running' })).status).toBe(409);

  const records = await auditOf('/tenant/audit?agent=1', tenant.token);
  expect(records.map((record) => [record.seq, record.resource.id, record.fields])).toEqual([
    [3, String(second.id), ['status']],
    [2, String(first.id), ['message', 'status']],
    [1, String(first.id), ['status']],
  ]);
  for (const record of records) {
    expect(record).toMatchObject({
      chain: `tenant:${tenant.id}/agent:1`,
      action: 'POST /agent/runs/{id}',
      resource: { type: 'run' },
      actor: {
        kind: 'agent',
        clientId: client.clientId,
        tenantId: tenant.id,
        agentId: 1,
        tokenId: hashToken(agent).slice(0, 16),
      },
    });
  }
  expect(JSON.stringify(records)).not.toContain('loaded 12 rows');
  // Kept as long as the runs they report on, not as long as the tenant's trail.
  const kept = await getItem<{ expiresAt: number }>(stored.agentAuditRecord.key({ tenantId: tenant.id, agentId: 1, seq: 1 }));
  expect(kept?.expiresAt).toBe(expiresAt('runRetentionDays', Date.parse(records[2]?.at ?? '')));
  // The tenant's chain and the client's trail keep the changes people make: the agent's token, not its reports.
  const tenantActions = (await auditOf('/tenant/audit', tenant.token)).map((record) => record.action);
  expect(tenantActions).toEqual(['POST /tenant/agents/{id}/token', 'POST /tenants']);
  expect((await auditOf('/tenants/audit', client.token)).map((record) => record.action)).toEqual(tenantActions);
  expect(await auditOf(`/tenants/audit?tenantId=${tenant.id}&agent=1`, client.token)).toEqual(records);
  expect(await auditOf(`/tenant/audit?agent=1&resourceId=${second.id}`, tenant.token)).toEqual(records.slice(0, 1));
  expect(await auditOf('/tenant/audit?agent=2', tenant.token)).toEqual([]);
  // Another client's tenant is 404; an agent without its tenant, or not an id, is refused.
  const stranger = await newClient();
  const theirs = await api('GET', `/tenants/audit?tenantId=${tenant.id}&agent=1`, { token: stranger.token });
  expect(expectErrorEnvelope(theirs, 404).code).toBe('tenant_not_found');
  for (const [path, token] of [
    ['/tenants/audit?agent=1', client.token],
    ['/tenant/audit?agent=0', tenant.token],
    ['/tenant/audit?agent=one', tenant.token],
  ] as const) {
    const refused = expectErrorEnvelope(await api('GET', path, { token }), 400);
    expect(
      refused.errors.map((error: { pointer: string }) => error.pointer),
      path,
    ).toEqual(['/agent']);
  }

  const verify = (...options: string[]) => runToEnd('bin/admin.ts', ['audit', 'verify', ...options], againstTable);
  const clean = await verify('--tenant', String(tenant.id), '--agent', '1', '--json');
  expect(clean.code, clean.output).toBe(0);
  expect(JSON.parse(clean.output.trim())).toMatchObject({ chain: `tenant:${tenant.id}/agent:1`, records: 3, headSeq: 3 });
  await db().send(
    new UpdateCommand({
      TableName: tableName(),
      Key: stored.agentAuditRecord.key({ tenantId: tenant.id, agentId: 1, seq: 2 }),
      UpdateExpression: 'SET #status = :status',
      ExpressionAttributeNames: { '#status': 'action' },
      ExpressionAttributeValues: { ':status': 'POST /agent/heartbeat' },
    }),
  );
  const tampered = await verify('--tenant', String(tenant.id), '--agent', '1');
  expect(tampered.code).toBe(1);
  expect(tampered.output).toContain('broken at seq 2: its content does not match its hash');
  const usage = await verify('--client', String(client.clientId), '--agent', '1');
  expect(usage.code).not.toBe(0);
  expect(usage.output).toContain('--agent <id> needs --tenant <id>');
});
