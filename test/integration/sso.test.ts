import { createLocalJWKSet, decodeProtectedHeader, exportSPKI, importJWK, jwtVerify, SignJWT } from 'jose';
import { describe, expect, test } from 'vitest';
import { createUser, deleteUser, revokeLogins, updateUser } from '#functions/core/directory/users.ts';
import { LandingError, land, safeRedirectTarget } from '#functions/core/sso/landing.ts';
import { issueLoginToken } from '#functions/core/sso/login-tokens.ts';
import { readSession } from '#functions/core/sso/sessions.ts';
import { currentKeyring, jwksOf, newSigningKey } from '#functions/core/sso/signing-keys.ts';
import { api, newClient, newTenant } from '#test/support/api.ts';

const hour = 3600 * 1000;

async function tenantWithUser(login = 'ana@acme.com') {
  const client = await newClient();
  const tenant = await newTenant(client.token, { nome: 'Acme' });
  const user = await createUser(tenant.id, { login, nome: 'Ana' });
  const subject = { tenantId: tenant.id, dominio: tenant.dominio, userId: user.userId, login: user.login };
  return { client, tenant, user, subject };
}

async function refusal(promise: Promise<unknown>): Promise<string> {
  try {
    await promise;
  } catch (error) {
    if (error instanceof LandingError) return error.problem;
    throw error;
  }
  throw new Error('expected the landing to refuse');
}

const cookieValue = (cookie: string) => cookie.split(';')[0] ?? '';

describe('login tokens', () => {
  test('are ES256 JWTs with kid, iss, aud = tenant domain, sub, login, tid, iat, exp = iat + 3600 and jti, verifiable with the JWKS', async () => {
    const { tenant, user, subject } = await tenantWithUser();
    const now = Date.parse('2026-11-22T10:00:00Z');
    const token = await issueLoginToken(subject, now);
    const header = decodeProtectedHeader(token);
    expect(header).toMatchObject({ alg: 'ES256', typ: 'JWT', kid: expect.any(String) });
    const jwks = createLocalJWKSet(jwksOf(await currentKeyring()));
    const { payload } = await jwtVerify(token, jwks, { algorithms: ['ES256'], currentDate: new Date(now) });
    expect(payload).toEqual({
      iss: 'bi-tenant-admin',
      aud: tenant.dominio,
      sub: String(user.userId),
      login: 'ana@acme.com',
      tid: tenant.id,
      iat: now / 1000,
      exp: now / 1000 + 3600,
      jti: expect.stringMatching(/^[0-9a-f-]{36}$/),
    });
    const other = await issueLoginToken(subject, now);
    expect(decodeProtectedHeader(other).kid).toBe(header.kid);
    expect(other).not.toBe(token);
  });

  test('work more than once within the hour and not after it', async () => {
    const { tenant, subject } = await tenantWithUser();
    const issuedAt = Date.now();
    const token = await issueLoginToken(subject, issuedAt);
    const first = await land(token, tenant.dominio, {}, issuedAt + 1000);
    const second = await land(token, tenant.dominio, {}, issuedAt + hour - 1000);
    expect(cookieValue(first.cookie)).not.toBe(cookieValue(second.cookie));
    expect(await refusal(land(token, tenant.dominio, {}, issuedAt + hour + 1000))).toBe('expired');
  });

  test('are refused on another tenant host, and when signed by another key, with alg none, or with HS256 keyed by the public key', async () => {
    const { tenant, subject } = await tenantWithUser();
    const now = Date.now();
    const claims = { login: subject.login, tid: subject.tenantId };
    const build = () =>
      new SignJWT(claims)
        .setIssuer('bi-tenant-admin')
        .setAudience(tenant.dominio)
        .setSubject(String(subject.userId))
        .setIssuedAt(Math.floor(now / 1000))
        .setExpirationTime(Math.floor(now / 1000) + 3600)
        .setJti(crypto.randomUUID());
    const ours = (await currentKeyring()).keys[0];
    if (!ours) throw new Error('the twin has a signing key');

    expect(await refusal(land(await issueLoginToken(subject, now), 'other-9.localhost', {}, now))).toBe('invalid');

    const stranger = await newSigningKey();
    const foreignSameKid = await build()
      .setProtectedHeader({ alg: 'ES256', kid: ours.kid })
      .sign(await importJWK(stranger.privateJwk, 'ES256'));
    expect(await refusal(land(foreignSameKid, tenant.dominio, {}, now))).toBe('invalid');
    const foreignKid = await build()
      .setProtectedHeader({ alg: 'ES256', kid: stranger.kid })
      .sign(await importJWK(stranger.privateJwk, 'ES256'));
    expect(await refusal(land(foreignKid, tenant.dominio, {}, now))).toBe('invalid');

    const [encodedHeader, encodedPayload] = (await issueLoginToken(subject, now)).split('.');
    const unsigned = `${Buffer.from(JSON.stringify({ alg: 'none', typ: 'JWT', kid: ours.kid })).toString('base64url')}.${encodedPayload}.`;
    expect(['invalid', 'malformed']).toContain(await refusal(land(unsigned, tenant.dominio, {}, now)));
    expect(encodedHeader).toBeDefined();

    const publicKey = await importJWK(ours.publicJwk, 'ES256', { extractable: true });
    if (publicKey instanceof Uint8Array) throw new Error('an EC public key is not a byte string');
    const publicPem = await exportSPKI(publicKey);
    for (const secret of [new TextEncoder().encode(publicPem), new TextEncoder().encode(JSON.stringify(ours.publicJwk))]) {
      const confused = await build().setProtectedHeader({ alg: 'HS256', kid: ours.kid }).sign(secret);
      expect(await refusal(land(confused, tenant.dominio, {}, now))).toBe('invalid');
    }

    // Not a compact JWS at all: malformed. (A real header over a damaged payload fails the signature: invalid.)
    for (const garbage of ['', 'abc', 'a.b.c']) {
      expect(await refusal(land(garbage, tenant.dominio, {}, now))).toBe('malformed');
    }
    expect(await refusal(land(`${encodedHeader}.!!!.sig`, tenant.dominio, {}, now))).toBe('invalid');
  });

  test('revocation voids earlier tokens and sessions at once; later tokens work', async () => {
    const { tenant, subject } = await tenantWithUser();
    const before = Date.now() - 5000;
    const token = await issueLoginToken(subject, before);
    const { cookie } = await land(token, tenant.dominio, {}, before);
    expect(await readSession([cookieValue(cookie)], tenant.dominio)).toBeDefined();

    await revokeLogins(tenant.id, subject.login);
    expect(await refusal(land(token, tenant.dominio, {}))).toBe('revoked');
    expect(await readSession([cookieValue(cookie)], tenant.dominio)).toBeUndefined();

    const after = await issueLoginToken(subject, Date.now() + 2000);
    expect((await land(after, tenant.dominio, {}, Date.now() + 2000)).location).toBe('/');
  });

  test('deleting the user voids their tokens and sessions at once', async () => {
    const { tenant, user, subject } = await tenantWithUser();
    const token = await issueLoginToken(subject);
    const { cookie } = await land(token, tenant.dominio, {});
    await deleteUser(tenant.id, user.userId);
    expect(await refusal(land(token, tenant.dominio, {}))).toBe('revoked');
    expect(await readSession([cookieValue(cookie)], tenant.dominio)).toBeUndefined();
  });

  test('a session is for its own tenant host only', async () => {
    const { tenant, subject } = await tenantWithUser();
    const { cookie } = await land(await issueLoginToken(subject), tenant.dominio, { showMenu: '0' });
    const session = await readSession([cookieValue(cookie)], tenant.dominio);
    expect(session).toMatchObject({
      user: { login: subject.login },
      tenant: { id: tenant.id },
      ui: { showMenu: '0', showDesksIcon: '1' },
    });
    expect(await readSession([cookieValue(cookie)], 'someone-else-3.localhost')).toBeUndefined();
    expect(await readSession(['__Host-bi_session=forged', 'bi_session=forged'], tenant.dominio)).toBeUndefined();
  });

  test("a session ends when its user's login changes, also when it changes back", async () => {
    const { tenant, user, subject } = await tenantWithUser();
    const { cookie } = await land(await issueLoginToken(subject), tenant.dominio, {});
    expect(await readSession([cookieValue(cookie)], tenant.dominio)).toBeDefined();
    await updateUser(tenant.id, user.userId, { login: 'ana.souza@acme.com' });
    expect(await readSession([cookieValue(cookie)], tenant.dominio)).toBeUndefined();
    await updateUser(tenant.id, user.userId, { login: subject.login });
    // Back to the old login, the session opened under it still holds: it is the same identity again.
    expect(await readSession([cookieValue(cookie)], tenant.dominio)).toBeDefined();
    await updateUser(tenant.id, user.userId, { nome: 'Ana Souza' });
    expect(await readSession([cookieValue(cookie)], tenant.dominio)).toMatchObject({ user: { nome: 'Ana Souza' } });
  });

  test('tokens and sessions from before a deactivation stay void after the reactivation; later ones work', async () => {
    const { client, tenant, subject } = await tenantWithUser();
    const token = await issueLoginToken(subject);
    const { cookie } = await land(token, tenant.dominio, {});
    expect((await api('POST', `/tenants/${tenant.id}/deactivate`, { token: client.token })).status).toBe(200);
    expect(await readSession([cookieValue(cookie)], tenant.dominio)).toBeUndefined();
    expect((await api('POST', `/tenants/${tenant.id}/activate`, { token: client.token })).status).toBe(200);
    expect(await refusal(land(token, tenant.dominio, {}))).toBe('revoked');
    expect(await readSession([cookieValue(cookie)], tenant.dominio)).toBeUndefined();
    // Whole seconds, as a token's iat: one issued in the second of the deactivation is void too.
    const later = Date.now() + 1000;
    expect((await land(await issueLoginToken(subject, later), tenant.dominio, {}, later)).location).toBe('/');
  });
});

describe('where the landing redirects', () => {
  const ref = (route: string) => Buffer.from(route).toString('base64');

  test.each([
    ['/apps/sales', '/apps/sales'],
    ['/apps/sales?tab=2#top', '/apps/sales?tab=2#top'],
    ['//evil.example', '/'],
    ['//evil.example/apps', '/'],
    ['https://evil.example', '/'],
    ['javascript:alert(1)', '/'],
    ['/\\evil.example', '/'],
    ['\\\\evil.example', '/'],
    ['/apps\n/x', '/'],
    ['apps/sales', '/'],
  ])('a route of %j goes to %j', async (route, location) => {
    expect(safeRedirectTarget(route, {})).toBe(location);
    const { tenant, subject } = await tenantWithUser();
    expect((await land(await issueLoginToken(subject), tenant.dominio, { ref: ref(route) })).location).toBe(location);
  });

  test('the UI flags travel with the redirect; other values are dropped', () => {
    expect(safeRedirectTarget('/apps/x?a=1', { showMenu: '0', showDesksIcon: '1' })).toBe(
      '/apps/x?a=1&showMenu=0&showDesksIcon=1',
    );
  });

  test('a ref that is not Base64 of UTF-8 is malformed (400), never a redirect', async () => {
    const { tenant, subject } = await tenantWithUser();
    for (const bad of ['%%%', 'a', '////', Buffer.from([0xff, 0xfe, 0xfd]).toString('base64')]) {
      expect(await refusal(land(await issueLoginToken(subject), tenant.dominio, { ref: bad }))).toBe('malformed_ref');
    }
    // URL-safe Base64 is accepted too.
    const urlSafe = Buffer.from('/apps/a?b=>>').toString('base64url');
    expect((await land(await issueLoginToken(subject), tenant.dominio, { ref: urlSafe })).location).toBe('/apps/a?b=%3E%3E');
  });
});
