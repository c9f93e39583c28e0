/**
 * What keeps a tenant's credentials from outliving its deletion, one interleaving at a time (the
 * races themselves: test/e2e/tenant-deletion-races.test.ts). An agent's creation and token rotation
 * check the tenant in their transaction (not deleted, not claimed by a deletion); the deletion
 * claims the tenant, then holds its transaction to the agents as it read them, so that an agent
 * made or rotated between its reads and its commit (a claim that expired under it) sends it back
 * to read again. And should an agent token outlive its tenant all the same, it beats no more.
 */
import { DeleteCommand, PutCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { findAgent, listAgents } from '#functions/core/agents/agent-repository.ts';
import { createAgent, rotateAgentToken } from '#functions/core/agents/agents.ts';
import { findTokenOwner } from '#functions/core/auth/token-repository.ts';
import { hashToken } from '#functions/core/auth/tokens.ts';
import { db, getItem, tableName } from '#functions/core/store/dynamo.ts';
import * as stored from '#functions/core/store/entity-declarations.ts';
import { claimDeletion, findTenant } from '#functions/core/tenants/tenant-repository.ts';
import { deleteTenant } from '#functions/core/tenants/tenants.ts';
import { api, expectErrorEnvelope, newClient, newTenant } from '#test/support/api.ts';

type Handler = (args: { input: object }) => Promise<unknown>;

/** Run once just before the next deletion's transaction (the one that writes the billing record). */
let beforeDeletionCommit: (() => Promise<void>) | undefined;
let deletionCommits = 0;

const interleave = (next: Handler, context: { commandName?: string }) => async (args: { input: object }) => {
  if (context.commandName?.startsWith('TransactWrite') && JSON.stringify(args.input).includes('BILLING#DELETED')) {
    deletionCommits += 1;
    const step = beforeDeletionCommit;
    beforeDeletionCommit = undefined;
    if (step) await step();
  }
  return next(args);
};

beforeAll(() => {
  db().middlewareStack.add(interleave as never, { step: 'initialize', name: 'beforeDeletionCommit', priority: 'high' });
});
afterAll(() => {
  db().middlewareStack.remove('beforeDeletionCommit');
});

async function tenantWithAgent() {
  const client = await newClient();
  const tenant = await newTenant(client.token);
  const agent = (await api('POST', '/tenant/agents', { token: tenant.token, body: { nome: 'warehouse' } })).body.data;
  return { client, tenant, agent: agent as { id: number; token: string } };
}

/** What a deletion that outlived its claim (or one whose claim expired) would find: no claim. */
const dropClaim = (tenantId: number) =>
  db().send(
    new UpdateCommand({ TableName: tableName(), Key: stored.tenant.key({ tenantId }), UpdateExpression: 'REMOVE deletingUntil' }),
  );

/** Every agent of the tenant whose token still resolves. */
async function liveAgents(tenantId: number) {
  const agents = await listAgents(tenantId);
  const owners = await Promise.all(agents.map((agent) => findTokenOwner(agent.tokenHash)));
  return agents.filter((_, index) => owners[index] !== undefined).map((agent) => agent.nome);
}

const tenantNotFound = { status: 404, message: 'Tenant not found' };

describe('an agent of a deleted tenant: refused in its own transaction', () => {
  test('a creation authenticated before the deletion committed makes nothing', async () => {
    const { client, tenant } = await tenantWithAgent();
    expect(await deleteTenant(client.clientId, tenant.id)).toBe(true);
    await expect(createAgent(tenant.id, client.clientId, 'late')).rejects.toMatchObject(tenantNotFound);
    expect((await listAgents(tenant.id)).map((agent) => agent.nome).sort()).toEqual(['default', 'warehouse']);
    expect(await getItem(stored.agentName.key({ tenantId: tenant.id, nome: 'late' }))).toBeUndefined();
  });

  test('a rotation authenticated before the deletion committed makes no token', async () => {
    const { client, tenant, agent } = await tenantWithAgent();
    expect(await deleteTenant(client.clientId, tenant.id)).toBe(true);
    await expect(rotateAgentToken(tenant.id, agent.id)).rejects.toMatchObject(tenantNotFound);
    expect((await findAgent(tenant.id, agent.id))?.tokenHash).toBe(hashToken(agent.token));
    expect(await liveAgents(tenant.id)).toEqual([]);
  });

  test('while a deletion claims the tenant, agents and tokens are not made; once the claim is over, they are', async () => {
    const { client, tenant, agent } = await tenantWithAgent();
    const read = await findTenant(tenant.id);
    if (!read) throw new Error('no tenant');
    expect(await claimDeletion(read, Date.now() + 60_000)).toMatchObject({ tenantId: tenant.id });
    await expect(createAgent(tenant.id, client.clientId, 'during')).rejects.toMatchObject(tenantNotFound);
    await expect(rotateAgentToken(tenant.id, agent.id)).rejects.toMatchObject(tenantNotFound);
    expect((await api('POST', `/tenants/${tenant.id}/token`, { token: client.token })).status).toBe(409);
    // The tenant still reads as it did: a claim is no deletion.
    expect((await api('GET', '/tenant', { token: tenant.token })).status).toBe(200);
    // A claim whose holder died ends with its deadline.
    await claimDeletion(read, Date.now() - 1);
    expect((await createAgent(tenant.id, client.clientId, 'after')).nome).toBe('after');
    expect((await rotateAgentToken(tenant.id, agent.id)).id).toBe(agent.id);
    expect((await api('POST', `/tenants/${tenant.id}/token`, { token: client.token })).status).toBe(200);
  });
});

describe('the deletion holds to the agents it read', () => {
  test('a deletion that stopped after its claim: the next one takes the claim over and deletes', async () => {
    const { client, tenant, agent } = await tenantWithAgent();
    const read = await findTenant(tenant.id);
    if (!read) throw new Error('no tenant');
    await claimDeletion(read, Date.now() + 60_000);
    expect(await deleteTenant(client.clientId, tenant.id)).toBe(true);
    expect((await findTenant(tenant.id))?.deletingUntil).toBeUndefined();
    expect((await api('POST', '/agent/heartbeat', { token: agent.token })).status).toBe(401);
    expect((await api('GET', '/tenant', { token: tenant.token })).status).toBe(404);
  });

  test('an agent created between its reads and its commit: the deletion reads again and revokes it too', async () => {
    const { client, tenant } = await tenantWithAgent();
    let created: { token: string } | undefined;
    beforeDeletionCommit = async () => {
      await dropClaim(tenant.id);
      created = await createAgent(tenant.id, client.clientId, 'sneaky');
    };
    deletionCommits = 0;
    expect(await deleteTenant(client.clientId, tenant.id)).toBe(true);
    expect(deletionCommits).toBe(2);
    expect(created).toBeDefined();
    expect(await findTokenOwner(hashToken(created?.token ?? ''))).toBeUndefined();
    expect(await liveAgents(tenant.id)).toEqual([]);
  });

  test("an agent's token rotated between its reads and its commit: the new token is revoked too", async () => {
    const { client, tenant, agent } = await tenantWithAgent();
    let rotated: { token: string } | undefined;
    beforeDeletionCommit = async () => {
      await dropClaim(tenant.id);
      rotated = await rotateAgentToken(tenant.id, agent.id);
    };
    deletionCommits = 0;
    expect(await deleteTenant(client.clientId, tenant.id)).toBe(true);
    expect(deletionCommits).toBe(2);
    expect(await findTokenOwner(hashToken(rotated?.token ?? ''))).toBeUndefined();
    // The token it replaced, kept by the rotation's grace period, with it.
    expect(await findTokenOwner(hashToken(agent.token))).toBeUndefined();
    expect(await liveAgents(tenant.id)).toEqual([]);
  });

  test("the previous tokens rotations kept, the tenant's and its agents', are revoked with it", async () => {
    const { client, tenant, agent } = await tenantWithAgent();
    const tenantToken = (await api('POST', `/tenants/${tenant.id}/token`, { token: client.token })).body.data.token;
    const agentToken = (await rotateAgentToken(tenant.id, agent.id)).token;
    // Both previous tokens still work before the deletion.
    expect((await api('GET', '/tenant', { token: tenant.token })).status).toBe(200);
    expect((await api('POST', '/agent/heartbeat', { token: agent.token })).status).toBe(200);
    expect(await deleteTenant(client.clientId, tenant.id)).toBe(true);
    for (const previous of [tenant.token, agent.token]) expect(await findTokenOwner(hashToken(previous))).toBeUndefined();
    expectErrorEnvelope(await api('GET', '/tenant', { token: tenant.token }), 401);
    expectErrorEnvelope(await api('POST', '/agent/heartbeat', { token: agent.token }), 401);
    // The current ones as before: the tenant's marked (404), its agents' revoked.
    expect(expectErrorEnvelope(await api('GET', '/tenant', { token: tenantToken }), 404).message).toBe('Tenant not found');
    expectErrorEnvelope(await api('POST', '/agent/heartbeat', { token: agentToken }), 401);
  });

  test('an agent whose token item is missing does not keep the tenant from being deleted', async () => {
    const { client, tenant, agent } = await tenantWithAgent();
    await db().send(new DeleteCommand({ TableName: tableName(), Key: stored.token.key({ tokenHash: hashToken(agent.token) }) }));
    deletionCommits = 0;
    expect(await deleteTenant(client.clientId, tenant.id)).toBe(true);
    expect(deletionCommits).toBe(1);
    expect((await findTenant(tenant.id))?.deletedAt).toBeDefined();
    expect((await findTenant(tenant.id))?.deletingUntil).toBeUndefined();
  });
});

test('an agent token that outlived its tenant all the same opens no agent route (401)', async () => {
  const { client, tenant, agent } = await tenantWithAgent();
  expect((await api('POST', '/agent/heartbeat', { token: agent.token })).status).toBe(200);
  expect(await deleteTenant(client.clientId, tenant.id)).toBe(true);
  // As if a creation had slipped past the deletion: the token item is back.
  await db().send(
    new PutCommand({
      TableName: tableName(),
      Item: {
        ...stored.token.key({ tokenHash: hashToken(agent.token) }),
        kind: 'agent',
        clientId: client.clientId,
        tenantId: tenant.id,
        agentId: agent.id,
        createdAt: new Date().toISOString(),
      },
    }),
  );
  const beat = await api('POST', '/agent/heartbeat', { token: agent.token });
  expect(beat.status).toBe(401);
  expect(beat.body.code).toBe('unauthorized');
  // Checked where every agent route authenticates, not by the heartbeat alone.
  const report = await api('POST', '/agent/runs/1', { token: agent.token, body: { status: 'running' } });
  expect(report.status).toBe(401);
  expect(report.body.code).toBe('unauthorized');
});
