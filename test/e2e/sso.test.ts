import { decodeJwt, decodeProtectedHeader } from 'jose';
import { describe, expect, inject, test } from 'vitest';
import { api, expectErrorEnvelope, newClient, newTenant } from '#test/support/api.ts';
import { cookiesOf, getOnTenantHost } from '#test/support/tenant-host.ts';

const json = (token: string, body: unknown) => ({ token, body });

async function tenantWithUsers(...logins: string[]) {
  const client = await newClient();
  const tenant = await newTenant(client.token, { nome: 'Acme' });
  const users = [];
  for (const login of logins) {
    const created = await api('POST', '/tenant/users', json(tenant.token, { login, nome: login.split('@')[0], email: login }));
    expect(created.status).toBe(201);
    users.push(created.body.data);
  }
  return { client, tenant, users };
}

const usuarioNaoEncontrado = async (answer: Promise<Parameters<typeof expectErrorEnvelope>[0]>) =>
  expect(expectErrorEnvelope(await answer, 404).message).toBe('Usuário não encontrado');

describe('users and groups', () => {
  test('users: logins unique per tenant (case-insensitively), read, changed, deleted', async () => {
    const { tenant, users } = await tenantWithUsers('ana@acme.com');
    const [ana] = users;
    expect(ana).toEqual({ id: expect.any(Number), nome: 'ana', login: 'ana@acme.com', email: 'ana@acme.com' });
    expect(
      expectErrorEnvelope(await api('POST', '/tenant/users', json(tenant.token, { login: 'ANA@acme.com', nome: 'Twin' })), 409)
        .code,
    ).toBe('login_taken');
    for (const body of [
      { nome: 'x' },
      { login: '', nome: 'x' },
      { login: ' padded ', nome: 'x' },
      { login: 'a', nome: 'x', email: 'not-mail' },
    ]) {
      expectErrorEnvelope(await api('POST', '/tenant/users', json(tenant.token, body)), 400);
    }
    const changed = await api(
      'PATCH',
      `/tenant/users/${ana.id}`,
      json(tenant.token, { login: 'ana.souza@acme.com', email: null }),
    );
    expect(changed.body.data).toEqual({ id: ana.id, nome: 'ana', login: 'ana.souza@acme.com' });
    await usuarioNaoEncontrado(api('POST', '/tenant/login', json(tenant.token, { login: 'ana@acme.com' })));
    expect((await api('POST', '/tenant/login', json(tenant.token, { login: 'ana.souza@acme.com' }))).status).toBe(200);
    expectErrorEnvelope(await api('PATCH', `/tenant/users/${ana.id}`, json(tenant.token, {})), 400);

    expect((await api('DELETE', `/tenant/users/${ana.id}`, { token: tenant.token })).body).toEqual({
      status: 'success',
      data: true,
    });
    expectErrorEnvelope(await api('GET', `/tenant/users/${ana.id}`, { token: tenant.token }), 404);
    // The login is free again.
    expect(
      (await api('POST', '/tenant/users', json(tenant.token, { login: 'ana.souza@acme.com', nome: 'New Ana' }))).status,
    ).toBe(201);
  });

  test('GET /tenant/users lists id, nome, login, groups and permissions, paginated', async () => {
    const { tenant, users } = await tenantWithUsers('a@x.io', 'b@x.io', 'c@x.io');
    const group = (await api('POST', '/tenant/groups', json(tenant.token, { nome: 'Analysts' }))).body.data;
    expect(group).toEqual({ id: expect.any(Number), nome: 'Analysts', members: [] });
    for (const user of users.slice(0, 2)) {
      expect((await api('PUT', `/tenant/groups/${group.id}/members/${user.id}`, { token: tenant.token })).status).toBe(200);
    }
    // Adding twice is harmless.
    await api('PUT', `/tenant/groups/${group.id}/members/${users[0].id}`, { token: tenant.token });
    expect((await api('GET', '/tenant/groups', { token: tenant.token })).body.data).toEqual([
      { id: group.id, nome: 'Analysts', members: [users[0].id, users[1].id] },
    ]);

    const listed = [];
    let cursor: string | null = null;
    do {
      const query: string = cursor ? `?limit=2&cursor=${encodeURIComponent(cursor)}` : '?limit=2';
      const page = await api('GET', `/tenant/users${query}`, { token: tenant.token });
      listed.push(...page.body.data);
      cursor = page.body.nextCursor;
    } while (cursor);
    expect(listed.map((user: { login: string }) => user.login)).toEqual(['a@x.io', 'b@x.io', 'c@x.io']);
    expect(listed[0]).toEqual({ ...users[0], groups: [{ id: group.id, nome: 'Analysts' }], permissions: [] });
    expect(listed[2].groups).toEqual([]);

    await api('DELETE', `/tenant/groups/${group.id}/members/${users[1].id}`, { token: tenant.token });
    expect((await api('GET', `/tenant/users/${users[1].id}`, { token: tenant.token })).body.data.groups).toEqual([]);
    await api('DELETE', `/tenant/groups/${group.id}`, { token: tenant.token });
    expect((await api('GET', `/tenant/users/${users[0].id}`, { token: tenant.token })).body.data.groups).toEqual([]);
    expect((await api('GET', '/tenant/groups', { token: tenant.token })).body.data).toEqual([]);
  });

  test("another tenant's users and groups are 404", async () => {
    // Ids are per tenant: the other tenant gets more users and groups, so its last ids exist only there.
    const mine = await tenantWithUsers('me@x.io');
    const theirs = await tenantWithUsers('them@y.io', 'they@y.io', 'those@y.io');
    await api('POST', '/tenant/groups', json(theirs.tenant.token, { nome: 'First' }));
    const theirGroup = (await api('POST', '/tenant/groups', json(theirs.tenant.token, { nome: 'Theirs' }))).body.data;
    const myGroup = (await api('POST', '/tenant/groups', json(mine.tenant.token, { nome: 'Mine' }))).body.data;
    const theirUser = theirs.users[2].id;
    expect(theirUser).toBeGreaterThan(mine.users[0].id);
    expect(theirGroup.id).toBeGreaterThan(myGroup.id);
    const token = mine.tenant.token;
    expectErrorEnvelope(await api('GET', `/tenant/users/${theirUser}`, { token }), 404);
    expectErrorEnvelope(await api('PATCH', `/tenant/users/${theirUser}`, json(token, { nome: 'Mine now' })), 404);
    expectErrorEnvelope(await api('DELETE', `/tenant/users/${theirUser}`, { token }), 404);
    expectErrorEnvelope(await api('PUT', `/tenant/groups/${theirGroup.id}/members/${mine.users[0].id}`, { token }), 404);
    expectErrorEnvelope(await api('PUT', `/tenant/groups/${myGroup.id}/members/${theirUser}`, { token }), 404);
    expectErrorEnvelope(await api('DELETE', `/tenant/groups/${theirGroup.id}`, { token }), 404);
    expect((await api('GET', `/tenant/users/${theirUser}`, { token: theirs.tenant.token })).body.data.nome).toBe('those');
    expect((await api('GET', '/tenant/groups', { token: theirs.tenant.token })).body.data).toHaveLength(2);
  });
});

describe('POST /tenant/login (spec 4.6)', () => {
  test('answers {success, token, url} with the URL of spec 4.6 and its optional parameters', async () => {
    const { tenant } = await tenantWithUsers('ana@acme.com');
    const plain = await api('POST', '/tenant/login', json(tenant.token, { login: 'ana@acme.com' }));
    expect(Object.keys(plain.body)).toEqual(['success', 'token', 'url']);
    expect(plain.body.success).toBe(true);
    const port = new URL(inject('twinUrl')).port;
    expect(plain.body.url).toBe(`http://${tenant.dominio}:${port}/auth/api/${plain.body.token}`);

    const route = '/apps/sales?tab=2';
    const full = await api(
      'POST',
      '/tenant/login',
      json(tenant.token, { login: 'ana@acme.com', showMenu: 0, showDesksIcon: 1, route }),
    );
    const url = new URL(full.body.url);
    expect(url.searchParams.get('showMenu')).toBe('0');
    expect(url.searchParams.get('showDesksIcon')).toBe('1');
    expect(Buffer.from(url.searchParams.get('ref') ?? '', 'base64').toString()).toBe(route);
    expect(full.body.token).not.toBe(plain.body.token);

    const jwks = await fetch(`${inject('twinUrl')}/.well-known/jwks.json`);
    expect(jwks.headers.get('cache-control')).toBe('public, max-age=300');
    const { keys } = (await jwks.json()) as { keys: Array<{ kid: string; alg: string; d?: string }> };
    expect(keys.map((key) => key.kid)).toContain(decodeProtectedHeader(full.body.token).kid);
    expect(keys.every((key) => key.alg === 'ES256' && key.d === undefined)).toBe(true);

    for (const body of [
      {},
      { login: 'ana@acme.com', showMenu: 2 },
      { login: 'ana@acme.com', route: '//evil.example' },
      { login: 'ana@acme.com', route: 'https://x' },
    ]) {
      expectErrorEnvelope(await api('POST', '/tenant/login', json(tenant.token, body)), 400);
    }
    // Routes that only leave the site once resolved: refused at /route, never signed into a URL.
    for (const route of [
      '/.//evil.example',
      '/..//evil.example',
      '/%2e//evil.example',
      '/a/..//evil.example',
      '/%2F/evil.example',
    ]) {
      const refused = expectErrorEnvelope(
        await api('POST', '/tenant/login', json(tenant.token, { login: 'ana@acme.com', route })),
        400,
      );
      expect(refused.errors, route).toEqual([expect.objectContaining({ pointer: '/route' })]);
    }
  });

  test('an unknown login, a login of another tenant and a deleted user are all "Usuário não encontrado"', async () => {
    const { tenant, users } = await tenantWithUsers('ana@acme.com');
    const other = await tenantWithUsers('bob@other.io');
    await usuarioNaoEncontrado(api('POST', '/tenant/login', json(tenant.token, { login: 'nobody@acme.com' })));
    await usuarioNaoEncontrado(api('POST', '/tenant/login', json(tenant.token, { login: 'bob@other.io' })));
    await api('DELETE', `/tenant/users/${users[0].id}`, { token: tenant.token });
    await usuarioNaoEncontrado(api('POST', '/tenant/login', json(tenant.token, { login: 'ana@acme.com' })));
    await usuarioNaoEncontrado(api('POST', '/tenant/login/revoke', json(tenant.token, { login: 'ana@acme.com' })));
    expect((await api('POST', '/tenant/login', json(other.tenant.token, { login: 'bob@other.io' }))).status).toBe(200);
  });

  test('an inactive tenant gets 409', async () => {
    const { client, tenant } = await tenantWithUsers('ana@acme.com');
    await api('POST', `/tenants/${tenant.id}/deactivate`, { token: client.token });
    expect(expectErrorEnvelope(await api('POST', '/tenant/login', json(tenant.token, { login: 'ana@acme.com' })), 409).code).toBe(
      'tenant_inactive',
    );
  });
});

describe('the landing and the session, over HTTP on the tenant host', () => {
  test('opens a session fit for an iframe, redirects to the route with the UI flags, and the session reads back', async () => {
    const { tenant } = await tenantWithUsers('ana@acme.com');
    const { url } = (
      await api('POST', '/tenant/login', json(tenant.token, { login: 'ana@acme.com', showMenu: 0, route: '/apps/sales' }))
    ).body;
    const landing = await getOnTenantHost(url);
    expect(landing.status).toBe(302);
    expect(landing.headers.location).toBe('/apps/sales?showMenu=0');
    const [setCookie] = [landing.headers['set-cookie']].flat();
    expect(setCookie).toMatch(
      /^__Host-bi_session=[A-Za-z0-9_-]{43}; Path=\/; Max-Age=28800; HttpOnly; Secure; SameSite=None; Partitioned$/,
    );

    const origin = new URL(url).origin;
    const session = await getOnTenantHost(`${origin}/auth/session`, cookiesOf(landing));
    expect(session.status).toBe(200);
    expect(JSON.parse(session.body).data).toMatchObject({
      user: { login: 'ana@acme.com', nome: 'ana' },
      tenant: { id: tenant.id, dominio: tenant.dominio },
      ui: { showMenu: '0', showDesksIcon: '1' },
    });
    expect((await getOnTenantHost(`${origin}/auth/session`)).status).toBe(401);
    // The token is reusable until it expires.
    expect((await getOnTenantHost(url)).status).toBe(302);
  });

  test('a ref leading off-site lands on /; a broken ref is a 400 page; a bad token a 401 page saying which', async () => {
    const { tenant } = await tenantWithUsers('ana@acme.com');
    const { url } = (await api('POST', '/tenant/login', json(tenant.token, { login: 'ana@acme.com' }))).body;
    const offSite = ['//evil.example', 'https://evil.example', 'javascript:alert(1)', '/.//evil.example', '/..//evil.example'];
    for (const route of [...offSite, '/%2e//evil.example', '/a/..//evil.example', '/%5C%5Cevil.example', '/\t/evil.example']) {
      for (const ref of [Buffer.from(route).toString('base64'), Buffer.from(route).toString('base64url')]) {
        const landing = await getOnTenantHost(`${url}?ref=${encodeURIComponent(ref)}`);
        expect([landing.status, landing.headers.location], route).toEqual([302, '/']);
      }
    }
    const onSite = await getOnTenantHost(`${url}?ref=${Buffer.from('/apps/../sales/%2e/q').toString('base64url')}`);
    expect(onSite.headers.location).toBe('/sales/q');
    const broken = await getOnTenantHost(`${url}?ref=%25%25not-base64`);
    expect(broken.status).toBe(400);
    expect(broken.headers['content-type']).toMatch(/^text\/html/);
    expect(broken.headers['set-cookie']).toBeUndefined();

    const wrongHost = await getOnTenantHost(url.replace(tenant.dominio, `other-${tenant.id}.localhost`));
    expect([wrongHost.status, wrongHost.headers['x-landing-problem']]).toEqual([401, 'invalid']);
    const mangled = await getOnTenantHost(url.replace('/auth/api/', '/auth/api/x'));
    expect(mangled.status).toBe(401);
    expect(mangled.body).toMatch(/<h1>This (is not a sign-in link|sign-in link is not valid)<\/h1>/);
  });

  test('"log out everywhere, then log back in": a login right after a revoke, in the same second, lands and its session holds', async () => {
    const { tenant } = await tenantWithUsers('ana@acme.com');
    const revokeAndLogin = async () => {
      const started = Date.now();
      expect((await api('POST', '/tenant/login/revoke', json(tenant.token, { login: 'ana@acme.com' }))).status).toBe(200);
      const { url, token } = (await api('POST', '/tenant/login', json(tenant.token, { login: 'ana@acme.com' }))).body;
      // The revoke ran after `started` and before the login: the same second when the login's iat is started's.
      return { url: url as string, sameSecond: decodeJwt(token).iat === Math.floor(started / 1000) };
    };
    let attempt = await revokeAndLogin();
    for (let tries = 1; !attempt.sameSecond && tries < 5; tries++) attempt = await revokeAndLogin();
    expect(attempt.sameSecond).toBe(true);
    const landing = await getOnTenantHost(attempt.url);
    expect([landing.status, landing.headers['x-landing-problem']]).toEqual([302, undefined]);
    const session = await getOnTenantHost(`${new URL(attempt.url).origin}/auth/session`, cookiesOf(landing));
    expect(session.status).toBe(200);
  });

  test('revocation and user deletion end sessions and void earlier URLs at once', async () => {
    const { tenant, users } = await tenantWithUsers('ana@acme.com', 'bia@acme.com');
    const login = async (user: string) =>
      (await api('POST', '/tenant/login', json(tenant.token, { login: user }))).body.url as string;
    const anaUrl = await login('ana@acme.com');
    const anaSession = cookiesOf(await getOnTenantHost(anaUrl));
    const origin = new URL(anaUrl).origin;
    // No pause: the URL and the session were issued earlier in this same second, and still end.
    expect((await api('POST', '/tenant/login/revoke', json(tenant.token, { login: 'ana@acme.com' }))).body).toEqual({
      success: true,
    });
    expect((await getOnTenantHost(`${origin}/auth/session`, anaSession)).status).toBe(401);
    const revoked = await getOnTenantHost(anaUrl);
    expect([revoked.status, revoked.headers['x-landing-problem']]).toEqual([401, 'revoked']);

    const biaUrl = await login('bia@acme.com');
    const biaSession = cookiesOf(await getOnTenantHost(biaUrl));
    await api('DELETE', `/tenant/users/${users[1].id}`, { token: tenant.token });
    expect((await getOnTenantHost(`${origin}/auth/session`, biaSession)).status).toBe(401);
    expect((await getOnTenantHost(biaUrl)).headers['x-landing-problem']).toBe('revoked');
  });
});
