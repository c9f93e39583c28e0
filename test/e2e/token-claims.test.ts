/**
 * Tokens carry their owner's ids so that read-only routes can start reading while the token is
 * looked up (httpHandler). Those ids are a claim anyone can write: these tests prove that only the
 * lookup decides whom a token authenticates, on every read-only route, over real HTTP.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { createClient } from '../../functions/core/clients/clients.ts';
import { readsOnly, routeKey, routes } from '../../functions/routes.ts';
import { api, expectErrorEnvelope, newClient, newTenant } from '../support/api.ts';

const secret = () => randomBytes(32).toString('base64url');
/** The path with every parameter filled (1 for ids, a name for the docs assets). */
const concrete = (path: string) => path.replace(/\{[^}]+\}/g, (name) => (name === '{asset}' ? 'docs.js' : '1'));

const readRoutes = (scheme: 'client' | 'tenant') => routes.filter((route) => readsOnly(route) && route.auth.includes(scheme));

describe('token claims', () => {
  it('covers the routes that read with a tenant or a client token', () => {
    expect(readRoutes('tenant').length).toBeGreaterThan(10);
    expect(readRoutes('client').length).toBeGreaterThan(2);
  });

  it('a tenant token rewritten to claim another tenant reads nothing of either, on every read-only route', async () => {
    const client = await newClient();
    const victim = await newTenant(client.token, { nome: `Victim ${randomUUID()}` });
    const caller = await newTenant(client.token, { nome: `Caller ${randomUUID()}` });
    const callerSecret = caller.token.split('.').at(-1);
    const rewritten = `ten_${client.clientId}.${victim.id}.${callerSecret}`;
    const forged = `ten_${client.clientId}.${victim.id}.${secret()}`;
    for (const route of readRoutes('tenant')) {
      for (const token of [rewritten, forged]) {
        const answer = await api(route.method, concrete(route.path), { token });
        expectErrorEnvelope(answer, 401);
        expect(JSON.stringify(answer.body), routeKey(route)).not.toMatch(/Victim|Caller/);
      }
    }
    // The caller's own token still reads its own tenant.
    const own = await api('GET', '/tenant', { token: caller.token });
    expect(own.body.data.nome).toBe(caller.nome);
  });

  it('a client token claiming another client lists none of its tenants, on every read-only route', async () => {
    const victim = await newClient();
    await newTenant(victim.token, { nome: `Victim ${randomUUID()}` });
    const caller = await newClient();
    const rewritten = `cli_${victim.clientId}.${caller.token.split('.').at(-1)}`;
    for (const route of readRoutes('client')) {
      const answer = await api(route.method, concrete(route.path), { token: rewritten });
      expectErrorEnvelope(answer, 401);
      expect(JSON.stringify(answer.body), routeKey(route)).not.toContain('Victim');
    }
  });

  it('tokens without ids (made before tokens carried them, or chosen by an operator) still work', async () => {
    const { client, token } = await createClient(`legacy-${randomUUID()}`, `cli_${secret()}`);
    const tenant = await newTenant(token, { nome: 'Legacy' });
    const listed = await api('GET', '/tenants', { token });
    expect(listed.status).toBe(200);
    expect(listed.body.data.map((row: { id: number }) => row.id)).toEqual([tenant.id]);
    expect(tenant.token.startsWith(`ten_${client.clientId}.${tenant.id}.`)).toBe(true);
  });
});
