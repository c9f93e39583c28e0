/**
 * An agent request reads the table once: the token's item says its tenant is live
 * (`revokedWithTenant`, auth/token-repository.ts), because every agent token is made in a
 * transaction that holds its tenant live and the tenant's deletion revokes every token its agents
 * name. Counted on the store's own client against DynamoDB Local; and an agent whose tenant is
 * deleted in the middle of a burst of its requests is 401 from the deletion's answer on.
 */
import { UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { describe, expect, test } from 'vitest';
import { findAgent } from '#functions/core/agents/agent-repository.ts';
import { findTokenOwner } from '#functions/core/auth/token-repository.ts';
import { hashToken } from '#functions/core/auth/tokens.ts';
import { db, tableName } from '#functions/core/store/dynamo.ts';
import * as stored from '#functions/core/store/entity-declarations.ts';
import { countedAgentAuthentication } from '#test/support/agent-auth.ts';
import { api, newClient, newTenant } from '#test/support/api.ts';

const authenticated = countedAgentAuthentication('countDynamoCommandsForAgentTokenReadsTest');

/** Whether the token item of this hash is an agent's marked `revokedWithTenant`. */
async function marked(tokenHash: string) {
  const item = await findTokenOwner(tokenHash);
  return item?.kind === 'agent' && item.revokedWithTenant === true;
}

/** A tenant with an agent of its own, and the agent's token rotated with a grace period: three live agent tokens. */
async function tenantWithAgentTokens() {
  const client = await newClient();
  const tenant = await newTenant(client.token);
  const created = (await api('POST', '/tenant/agents', { token: tenant.token, body: { nome: 'warehouse' } })).body.data as {
    id: number;
    token: string;
  };
  const rotated = (await api('POST', `/tenant/agents/${created.id}/token`, { token: tenant.token })).body.data as {
    token: string;
  };
  const defaultAgent = (
    await api('POST', '/tenant/agents/1/token', { token: tenant.token, body: { previousValidForSeconds: 0 } })
  ).body.data as { token: string };
  return {
    client,
    tenant,
    agentId: created.id,
    tokens: { current: rotated.token, previous: created.token, default: defaultAgent.token },
  };
}

describe('an agent request reads the table once', () => {
  test("a created agent's token, its rotated one, the previous one in its grace period and the default agent's", async () => {
    const { tenant, agentId, tokens } = await tenantWithAgentTokens();
    for (const [which, token] of Object.entries(tokens)) {
      const principal = { kind: 'agent', tenantId: tenant.id, agentId: which === 'default' ? 1 : agentId };
      expect(await authenticated(token), which).toEqual({
        answer: expect.objectContaining(principal),
        commands: ['GetItemCommand'],
      });
      expect(await marked(hashToken(token)), which).toBe(true);
    }
  });

  test('the default agent token the tenant was created with is marked by its creation', async () => {
    const client = await newClient();
    const tenant = await newTenant(client.token);
    const agent = await findAgent(tenant.id, 1);
    expect(await marked(agent?.tokenHash ?? '')).toBe(true);
  });

  test('an agent token without the mark (one an earlier release made) is checked against its tenant: two reads', async () => {
    const { tenant, tokens } = await tenantWithAgentTokens();
    await db().send(
      new UpdateCommand({
        TableName: tableName(),
        Key: stored.token.key({ tokenHash: hashToken(tokens.current) }),
        UpdateExpression: 'REMOVE revokedWithTenant',
      }),
    );
    expect(await authenticated(tokens.current)).toEqual({
      answer: expect.objectContaining({ kind: 'agent', tenantId: tenant.id }),
      commands: ['GetItemCommand', 'GetItemCommand'],
    });
  });
});

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

test('an agent of a tenant deleted in the middle of a burst of its requests: 401 for every request sent after the deletion answered', async () => {
  const { client, tenant, tokens } = await tenantWithAgentTokens();
  const live = Object.values(tokens);
  let deletionAnswered = false;
  /** Beats with `token` one after another until three were sent after the deletion answered. */
  const beating = async (token: string) => {
    const beats: Array<{ sentAfterDeletion: boolean; status: number }> = [];
    while (beats.filter((beat) => beat.sentAfterDeletion).length < 3) {
      const sentAfterDeletion = deletionAnswered;
      beats.push({ sentAfterDeletion, status: (await api('POST', '/agent/heartbeat', { token })).status });
    }
    return beats;
  };
  const [loops, deleted] = await Promise.all([
    // Two loops a token: the current one, the previous one in its grace period, the default agent's.
    Promise.all([...live, ...live].map(beating)),
    sleep(50)
      .then(() => api('DELETE', '/tenants', { token: client.token, body: { id: tenant.id } }))
      .then((answer) => {
        deletionAnswered = true;
        return answer;
      }),
  ]);
  expect(deleted.status, JSON.stringify(deleted.body)).toBe(200);
  const beats = loops.flat();
  expect(beats.some((beat) => !beat.sentAfterDeletion)).toBe(true);
  // Before the deletion answered, a beat is either side of its commit; after, it is 401, whatever its token.
  expect(beats.every(({ status }) => status === 200 || status === 401)).toBe(true);
  expect(beats.filter((beat) => beat.sentAfterDeletion && beat.status !== 401)).toEqual([]);
  // Each refused with one read: the token is gone (the deletion revoked it), nothing else is read.
  for (const token of live) expect(await authenticated(token)).toEqual({ answer: { status: 401 }, commands: ['GetItemCommand'] });
});
