/**
 * Only the token lookup decides whom a token authenticates: a token altered in any way, or one
 * written to look like another caller's, reads nothing on any route that reads, over real HTTP.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { createClient } from '#functions/core/clients/clients.ts';
import { routeKey, routes } from '#functions/routes.ts';
import { api, expectErrorEnvelope, newClient, newTenant } from '#test/support/api.ts';

const secret = () => randomBytes(32).toString('base64url');
/** The path with every parameter filled (1 for ids, a name for the docs assets). */
const concrete = (path: string) => path.replace(/\{[^}]+\}/g, (name) => (name === '{asset}' ? 'docs.js' : '1'));
/** The token with its last character changed. */
const altered = (token: string) => `${token.slice(0, -1)}${token.endsWith('A') ? 'B' : 'A'}`;

const readRoutes = (scheme: 'client' | 'tenant') =>
  routes.filter((route) => route.method === 'GET' && route.auth.includes(scheme));

describe('tampered tokens', () => {
  it('covers the routes that read with a tenant or a client token', () => {
    expect(readRoutes('tenant').length).toBeGreaterThan(10);
    expect(readRoutes('client').length).toBeGreaterThan(2);
  });

  it('an altered or forged tenant token reads nothing of any tenant, on every route that reads', async () => {
    const client = await newClient();
    await newTenant(client.token, { nome: `Victim ${randomUUID()}` });
    const caller = await newTenant(client.token, { nome: `Caller ${randomUUID()}` });
    for (const route of readRoutes('tenant')) {
      for (const token of [altered(caller.token), `ten_${secret()}`]) {
        const answer = await api(route.method, concrete(route.path), { token });
        expectErrorEnvelope(answer, 401);
        expect(JSON.stringify(answer.body), routeKey(route)).not.toMatch(/Victim|Caller/);
      }
    }
    // The caller's own token still reads its own tenant.
    const own = await api('GET', '/tenant', { token: caller.token });
    expect(own.body.data.nome).toBe(caller.nome);
  });

  it("an altered client token lists none of the client's tenants, on every route that reads", async () => {
    const victim = await newClient();
    await newTenant(victim.token, { nome: `Victim ${randomUUID()}` });
    for (const route of readRoutes('client')) {
      const answer = await api(route.method, concrete(route.path), { token: altered(victim.token) });
      expectErrorEnvelope(answer, 401);
      expect(JSON.stringify(answer.body), routeKey(route)).not.toContain('Victim');
    }
  });

  it('a token chosen by an operator (LOCAL_CLIENT_TOKEN, `client rotate-token`) works like a minted one', async () => {
    const { token } = await createClient(`chosen-${randomUUID()}`, `cli_${secret()}`);
    const tenant = await newTenant(token, { nome: 'Chosen' });
    const listed = await api('GET', '/tenants', { token });
    expect(listed.status).toBe(200);
    expect(listed.body.data.map((row: { id: number }) => row.id)).toEqual([tenant.id]);
  });
});
