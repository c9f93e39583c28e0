/**
 * A tenant deleted while credentials of its own are being made (docs/architecture.md, "Crash and race
 * safety": "a deleted tenant reads nothing"). Over real HTTP: bursts of agent creations, agent token
 * rotations, tenant token rotations and logins, staggered a few milliseconds apart, with the tenant's
 * deletion sent into the middle of each. Whichever commits second must see the first: afterwards no
 * token of any kind the burst produced works, and the table holds no live agent token of the tenant.
 */
import { ScanCommand } from '@aws-sdk/lib-dynamodb';
import { describe, expect, test } from 'vitest';
import { listAgents } from '#functions/core/agents/agent-repository.ts';
import { findTokenOwner } from '#functions/core/auth/token-repository.ts';
import { db, tableName } from '#functions/core/store/dynamo.ts';
import { api, type ApiAnswer, newClient, newTenant } from '#test/support/api.ts';
import { cookiesOf, getOnTenantHost } from '#test/support/tenant-host.ts';

const rounds = 3;
const burst = 40;
const staggerMs = 3;
const deleteAtMs = 30;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
/** `make(index)` for each index, the index-th started `index * staggerMs` ms after the first. */
const staggered = <T>(count: number, make: (index: number) => Promise<T>) =>
  Promise.all(Array.from({ length: count }, (_, index) => sleep(index * staggerMs).then(() => make(index))));
const deleteAfter = (ms: number, clientToken: string, tenantId: number) =>
  sleep(ms).then(() => api('DELETE', '/tenants', { token: clientToken, body: { id: tenantId } }));
const statuses = (answers: readonly ApiAnswer[]) =>
  answers.reduce<Record<number, number>>((counts, { status }) => ({ ...counts, [status]: (counts[status] ?? 0) + 1 }), {});

/**
 * The token items of a kind left for these tenants (a full scan: what no answer showed counts too).
 * Small pages: DynamoDB Local serves one request at a time, and every other file's requests wait
 * behind each page (test/support/sequencer.ts starts this file first, while the table is small).
 */
async function tokenItemsOf(kind: 'agent' | 'tenant', tenantIds: readonly number[]) {
  const found: Array<Record<string, unknown>> = [];
  let startKey: Record<string, unknown> | undefined;
  do {
    const page = await db().send(
      new ScanCommand({
        TableName: tableName(),
        FilterExpression: `begins_with(pk, :token) AND #kind = :kind AND tenantId IN (${tenantIds.map((_, i) => `:t${i}`).join(', ')})`,
        ExpressionAttributeNames: { '#kind': 'kind' },
        ExpressionAttributeValues: {
          ':token': 'TOKEN#',
          ':kind': kind,
          ...Object.fromEntries(tenantIds.map((id, i) => [`:t${i}`, id])),
        },
        ExclusiveStartKey: startKey,
        Limit: 500,
      }),
    );
    found.push(...(page.Items ?? []));
    startKey = page.LastEvaluatedKey;
  } while (startKey);
  return found;
}

describe('a tenant deleted while its credentials are being made: none outlives it', () => {
  test(`${burst} agent creations and ${burst} agent token rotations racing the deletion (${rounds} rounds)`, async () => {
    const tenantIds: number[] = [];
    const report: string[] = [];
    const survivors: string[] = [];
    for (let round = 0; round < rounds; round++) {
      const client = await newClient();
      const tenant = await newTenant(client.token);
      tenantIds.push(tenant.id);
      // Agents to rotate: the default one (id 1) and three more.
      const targets = [1];
      const tokens: string[] = [];
      for (const nome of ['r0', 'r1', 'r2']) {
        const created = await api('POST', '/tenant/agents', { token: tenant.token, body: { nome } });
        expect(created.status).toBe(201);
        targets.push(created.body.data.id);
        tokens.push(created.body.data.token);
      }
      const [creations, rotations, deleted] = await Promise.all([
        staggered(burst, (index) => api('POST', '/tenant/agents', { token: tenant.token, body: { nome: `a${index}` } })),
        staggered(burst, (index) =>
          api('POST', `/tenant/agents/${targets[index % targets.length]}/token`, { token: tenant.token }),
        ),
        deleteAfter(deleteAtMs, client.token, tenant.id),
      ]);
      expect(deleted.status, JSON.stringify(deleted.body)).toBe(200);
      // Every answer is the agent, the tenant gone (its token: 404), or a rotation that lost to another.
      expect(creations.every((answer) => answer.status === 201 || answer.status === 404)).toBe(true);
      expect(rotations.every((answer) => [200, 404, 409].includes(answer.status))).toBe(true);
      for (const answer of [...creations, ...rotations]) if (answer.status < 300) tokens.push(answer.body.data.token);

      expect((await api('GET', '/tenant', { token: tenant.token })).status).toBe(404);
      const beats = await Promise.all(tokens.map((token) => api('POST', '/agent/heartbeat', { token })));
      const working = beats.filter((beat) => beat.status === 200).length;
      const agents = await listAgents(tenant.id);
      const owners = await Promise.all(agents.map((agent) => findTokenOwner(agent.tokenHash)));
      const live = agents.filter((_, index) => owners[index] !== undefined).map((agent) => agent.nome);
      report.push(
        `round ${round}: creations ${JSON.stringify(statuses(creations))}, rotations ${JSON.stringify(statuses(rotations))}, ` +
          `${working} of ${tokens.length} agent tokens still work, live agents: ${live.length} of ${agents.length}`,
      );
      if (working > 0 || live.length > 0)
        survivors.push(`tenant ${tenant.id}: ${working} tokens work, live agents ${live.join(',')}`);
    }
    console.log(report.join('\n'));
    expect(survivors).toEqual([]);
    expect(await tokenItemsOf('agent', tenantIds)).toEqual([]);
  }, 120_000);

  test(`agent tokens rotated in a loop by the tenant do not hold its deletion off (${rounds} rounds)`, async () => {
    for (let round = 0; round < rounds; round++) {
      const client = await newClient();
      const tenant = await newTenant(client.token);
      let deleting = true;
      const tokens: string[] = [];
      // Four loops rotating the default agent's token as fast as the twin answers, until the tenant is gone.
      const loops = Array.from({ length: 4 }, async () => {
        while (deleting) {
          const rotated = await api('POST', '/tenant/agents/1/token', { token: tenant.token });
          if (rotated.status === 200) tokens.push(rotated.body.data.token);
          if (rotated.status === 404) return;
        }
      });
      await sleep(100);
      const deleted = await api('DELETE', '/tenants', { token: client.token, body: { id: tenant.id } });
      deleting = false;
      await Promise.all(loops);
      expect(deleted.status, JSON.stringify(deleted.body)).toBe(200);
      expect(tokens.length).toBeGreaterThan(0);
      const beats = await Promise.all(tokens.map((token) => api('POST', '/agent/heartbeat', { token })));
      expect(beats.filter((beat) => beat.status === 200)).toEqual([]);
    }
  }, 120_000);

  test(`${burst} tenant token rotations racing the deletion (${rounds} rounds): every token the rotations showed is dead`, async () => {
    const tenantIds: number[] = [];
    for (let round = 0; round < rounds; round++) {
      const client = await newClient();
      const tenant = await newTenant(client.token);
      tenantIds.push(tenant.id);
      const [rotations, deleted] = await Promise.all([
        staggered(burst, () => api('POST', `/tenants/${tenant.id}/token`, { token: client.token })),
        deleteAfter(deleteAtMs, client.token, tenant.id),
      ]);
      expect(deleted.status, JSON.stringify(deleted.body)).toBe(200);
      expect(rotations.every((answer) => [200, 404, 409].includes(answer.status))).toBe(true);
      const tokens = [
        tenant.token,
        ...rotations.filter((answer) => answer.status === 200).map((answer) => answer.body.data.token),
      ];
      const reads = await Promise.all(tokens.map((token) => api('GET', '/tenant', { token })));
      // The last token is marked (404 `Tenant not found`), the ones rotated away are unknown (401).
      expect(reads.filter((read) => read.status === 200)).toEqual([]);
    }
    const unmarked = (await tokenItemsOf('tenant', tenantIds)).filter((item) => item.tenantDeleted !== true);
    expect(unmarked).toEqual([]);
  }, 120_000);

  test(`${burst} logins and their landings racing the deletion (${rounds} rounds): no login URL or session works after`, async () => {
    for (let round = 0; round < rounds; round++) {
      const client = await newClient();
      const tenant = await newTenant(client.token);
      const user = await api('POST', '/tenant/users', { token: tenant.token, body: { login: 'ana@x.io', nome: 'Ana' } });
      expect(user.status).toBe(201);
      const login = () => api('POST', '/tenant/login', { token: tenant.token, body: { login: 'ana@x.io' } });
      const [logins, landings, deleted] = await Promise.all([
        staggered(burst, login),
        // Each logs in and lands at once: sessions opened while the deletion commits.
        staggered(burst / 2, async () => {
          const answer = await login();
          if (answer.status !== 200) return undefined;
          const url = answer.body.url as string;
          return { origin: new URL(url).origin, landing: await getOnTenantHost(url) };
        }),
        deleteAfter(deleteAtMs, client.token, tenant.id),
      ]);
      expect(deleted.status, JSON.stringify(deleted.body)).toBe(200);
      const urls = logins.filter((answer) => answer.status === 200).map((answer) => answer.body.url as string);
      for (const url of urls) expect((await getOnTenantHost(url)).status).toBe(401);
      for (const landed of landings) {
        if (landed?.landing.status !== 302) continue;
        expect((await getOnTenantHost(`${landed.origin}/auth/session`, cookiesOf(landed.landing))).status).toBe(401);
      }
    }
  }, 120_000);
});
