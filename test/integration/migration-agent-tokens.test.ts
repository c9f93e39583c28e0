/**
 * Migration 9 (functions/core/migrations/agent-tokens-revoked-with-tenant.ts) on agent tokens as
 * earlier releases stored them, without `revokedWithTenant`: after it, each token its agent names
 * (current, or previous in its grace period) of a live tenant is marked and authenticates with one
 * read, answering as before; one its agent does not name, or of a tenant deleted or being deleted,
 * stays unmarked and keeps being checked against its tenant; the tenant's deletion then revokes what
 * was marked. Stopped at any write and run again, it ends the same.
 */
import { PutCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { describe, expect, test } from 'vitest';
import { findTokenOwner } from '#functions/core/auth/token-repository.ts';
import { hashToken, newToken } from '#functions/core/auth/tokens.ts';
import { agentTokensRevokedWithTenant } from '#functions/core/migrations/agent-tokens-revoked-with-tenant.ts';
import { db, tableName } from '#functions/core/store/dynamo.ts';
import * as stored from '#functions/core/store/entity-declarations.ts';
import { claimDeletion, findTenant } from '#functions/core/tenants/tenant-repository.ts';
import { deleteTenant } from '#functions/core/tenants/tenants.ts';
import { countedAgentAuthentication } from '#test/support/agent-auth.ts';
import { api, newClient, newTenant } from '#test/support/api.ts';
import { installFaultInjection } from '#test/support/faults.ts';
import { migrateWithin, selectedBy, stoppedAfterEachWrite } from '#test/support/migrations.ts';

installFaultInjection();

const counted = countedAgentAuthentication('countDynamoCommandsForAgentTokenMigrationTest');

/** What authenticating `token` on an agent route answers (its principal, or its status), and how many DynamoDB requests it made. */
async function authenticated(token: string) {
  const { answer, commands } = await counted(token);
  return { answer, requests: commands.length };
}

const tokenPartition = (token: string) => stored.token.key({ tokenHash: hashToken(token) }).pk;

const unmark = (token: string) =>
  db().send(
    new UpdateCommand({
      TableName: tableName(),
      Key: stored.token.key({ tokenHash: hashToken(token) }),
      UpdateExpression: 'REMOVE revokedWithTenant',
    }),
  );

/** Whether the token's item is an agent's marked `revokedWithTenant`. */
async function marked(token: string) {
  const item = await findTokenOwner(hashToken(token));
  return item?.kind === 'agent' && item.revokedWithTenant === true;
}

/**
 * Agent tokens as an earlier release left them, none marked: a live tenant's (an agent's current
 * token, its previous one in its grace period, the default agent's), one its agent does not name (an
 * item put there by hand), a tenant's under a deletion's claim, and one left of a deleted tenant.
 */
async function earlierTokens() {
  const client = await newClient();
  const tenant = await newTenant(client.token);
  const agent = (await api('POST', '/tenant/agents', { token: tenant.token, body: { nome: 'warehouse' } })).body.data;
  const current = (await api('POST', `/tenant/agents/${agent.id}/token`, { token: tenant.token })).body.data.token as string;
  const defaultAgent = (await api('POST', '/tenant/agents/1/token', { token: tenant.token })).body.data.token as string;
  const unnamed = await newToken('agent', { clientId: client.clientId, tenantId: tenant.id, agentId: agent.id });
  await db().send(
    new PutCommand({
      TableName: tableName(),
      Item: {
        ...stored.token.key({ tokenHash: hashToken(unnamed) }),
        kind: 'agent',
        clientId: client.clientId,
        tenantId: tenant.id,
        agentId: agent.id,
        createdAt: new Date().toISOString(),
      },
    }),
  );

  const claimed = await newTenant(client.token);
  const claimedAgent = (await api('POST', '/tenant/agents/1/token', { token: claimed.token })).body.data.token as string;
  const claimedRecord = await findTenant(claimed.id);
  if (!claimedRecord) throw new Error('no tenant');
  await claimDeletion(claimedRecord, Date.now() + 10 * 60_000);

  const deleted = await newTenant(client.token);
  const deletedAgent = (await api('POST', '/tenant/agents/1/token', { token: deleted.token })).body.data.token as string;
  expect(await deleteTenant(client.clientId, deleted.id)).toBe(true);
  // As if its deletion had missed it: the default agent's token is back.
  await db().send(
    new PutCommand({
      TableName: tableName(),
      Item: {
        ...stored.token.key({ tokenHash: hashToken(deletedAgent) }),
        kind: 'agent',
        clientId: client.clientId,
        tenantId: deleted.id,
        agentId: 1,
        createdAt: new Date().toISOString(),
      },
    }),
  );

  const tokens = {
    live: { current, previous: agent.token as string, default: defaultAgent },
    unmarkable: { unnamed, claimed: claimedAgent, deleted: deletedAgent },
  };
  const all = [...Object.values(tokens.live), ...Object.values(tokens.unmarkable)];
  for (const token of all) await unmark(token);
  const answers = await Promise.all(all.map(async (token) => (await authenticated(token)).answer));
  return { client, tenant, tokens, all, answers };
}

type Earlier = Awaited<ReturnType<typeof earlierTokens>>;

const migrate = (each: Earlier) => migrateWithin(agentTokensRevokedWithTenant, each.all.map(tokenPartition));

describe('migration 9: agent tokens revoked with their tenant', () => {
  test('the live tenant’s tokens its agents name are marked and read once, the rest stay checked against their tenant, answers unchanged', async () => {
    const each = await earlierTokens();
    const { tokens, all, answers } = each;
    // Before: every agent token reads its tenant too.
    for (const token of Object.values(tokens.live)) expect((await authenticated(token)).requests).toBe(2);
    expect(await migrate(each)).toBe(all.length);

    for (const [which, token] of Object.entries(tokens.live)) {
      expect(await marked(token), which).toBe(true);
      expect((await authenticated(token)).requests, which).toBe(1);
    }
    for (const [which, token] of Object.entries(tokens.unmarkable)) expect(await marked(token), which).toBe(false);
    expect((await authenticated(tokens.unmarkable.deleted)).answer).toEqual({ status: 401 });
    expect(await Promise.all(all.map(async (token) => (await authenticated(token)).answer))).toEqual(answers);
    // It selects the unmarked ones only: once marked, a token is not handed to it again.
    const selected = (
      await Promise.all(all.map((token) => selectedBy(agentTokensRevokedWithTenant, tokenPartition(token))))
    ).flat();
    expect(selected.map((item) => item.pk).sort()).toEqual(Object.values(tokens.unmarkable).map(tokenPartition).sort());

    // The tenant's deletion revokes every token it marked.
    expect(await deleteTenant(each.client.clientId, each.tenant.id)).toBe(true);
    for (const [which, token] of Object.entries(tokens.live)) {
      expect(await findTokenOwner(hashToken(token)), which).toBeUndefined();
      expect((await authenticated(token)).answer, which).toEqual({ status: 401 });
    }
  }, 60_000);

  test('stopped at any write and run again, it ends the same', async () => {
    const writes = await stoppedAfterEachWrite({
      prepare: earlierTokens,
      run: async (each) => {
        await migrate(each);
      },
      check: async ({ tokens, all, answers }, after) => {
        for (const token of Object.values(tokens.live)) expect(await marked(token), after).toBe(true);
        for (const token of Object.values(tokens.unmarkable)) expect(await marked(token), after).toBe(false);
        expect(await Promise.all(all.map(async (token) => (await authenticated(token)).answer)), after).toEqual(answers);
      },
      width: 3,
    });
    // One commit per token its agent names: three that mark, two its tenant's condition refuses (claimed, deleted).
    expect(writes).toBe(5);
  }, 120_000);
});
