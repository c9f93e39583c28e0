import { createHash, randomBytes } from 'node:crypto';
import { UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { createLocalJWKSet, decodeJwt, decodeProtectedHeader, exportSPKI, importJWK, jwtVerify, SignJWT } from 'jose';
import { describe, expect, test } from 'vitest';
import { createUser, deleteUser, updateUser } from '#functions/core/directory/users.ts';
import { LandingError, land, safeRedirectTarget } from '#functions/core/sso/landing.ts';
import { createLogin } from '#functions/core/sso/login.ts';
import { issueLoginToken } from '#functions/core/sso/login-tokens.ts';
import { revokeLogins } from '#functions/core/sso/revoke-logins.ts';
import { insertSession } from '#functions/core/sso/session-repository.ts';
import { readSession } from '#functions/core/sso/sessions.ts';
import { currentKeyring, jwksOf, newSigningKey } from '#functions/core/sso/signing-keys.ts';
import { db, tableName } from '#functions/core/store/dynamo.ts';
import * as stored from '#functions/core/store/entity-declarations.ts';
import { findTenant } from '#functions/core/tenants/tenant-repository.ts';
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
  test('are ES256 JWTs with kid, iss, aud = tenant domain, sub, login, tid, iat, iat_ms, exp = iat + 3600 and jti, verifiable with the JWKS', async () => {
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
      iat_ms: now,
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

    const after = await createLogin(tenant.id, { login: subject.login });
    expect((await land(after.token, tenant.dominio, {})).location).toBe('/');
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
    // To the millisecond: one issued 1 ms before the deactivation is void, one issued 1 ms after it works.
    const deactivatedAt = (await findTenant(tenant.id))?.sessionsValidAfterMs ?? 0;
    expect(deactivatedAt).toBeGreaterThan(0);
    const justBefore = await issueLoginToken(subject, deactivatedAt - 1);
    expect(await refusal(land(justBefore, tenant.dominio, {}, deactivatedAt + 1))).toBe('revoked');
    const justAfter = await createLogin(tenant.id, { login: subject.login }, deactivatedAt + 1);
    const { cookie: later } = await land(justAfter.token, tenant.dominio, {}, deactivatedAt + 1);
    expect(await readSession([cookieValue(later)], tenant.dominio, deactivatedAt + 2)).toBeDefined();
  });
});

describe('revocation, to the millisecond', () => {
  /** An instant 500 ms into a second, so that a millisecond either side stays in the same second. */
  const midSecond = () => Math.floor(Date.now() / 1000) * 1000 + 500;

  test('a login issued right after a revoke (same second) lands and its session holds; one issued 1 ms before does not', async () => {
    const { tenant, subject } = await tenantWithUser();
    const revokedAt = midSecond();
    const before = await createLogin(tenant.id, { login: subject.login }, revokedAt - 1);
    const { cookie: sessionBefore } = await land(before.token, tenant.dominio, {}, revokedAt - 1);
    expect(await readSession([cookieValue(sessionBefore)], tenant.dominio, revokedAt - 1)).toBeDefined();

    await revokeLogins(tenant.id, subject.login, revokedAt);
    expect(await refusal(land(before.token, tenant.dominio, {}, revokedAt + 1))).toBe('revoked');
    expect(await readSession([cookieValue(sessionBefore)], tenant.dominio, revokedAt + 1)).toBeUndefined();

    const after = await createLogin(tenant.id, { login: subject.login }, revokedAt + 1);
    expect(decodeJwt(after.token)).toMatchObject({ iat: Math.floor(revokedAt / 1000), iat_ms: revokedAt + 1 });
    const landed = await land(after.token, tenant.dominio, {}, revokedAt + 1);
    expect(landed.location).toBe('/');
    expect(await readSession([cookieValue(landed.cookie)], tenant.dominio, revokedAt + 2)).toMatchObject({
      user: { login: subject.login },
    });
  });

  test('a login and a landing after the revoke work even on clocks behind the one that revoked', async () => {
    const { tenant, subject } = await tenantWithUser();
    const revokedAt = midSecond();
    await revokeLogins(tenant.id, subject.login, revokedAt);
    // Read after the revoke, on a clock 20 ms behind: issued just after the revocation all the same.
    const login = await createLogin(tenant.id, { login: subject.login }, revokedAt - 20);
    expect(decodeJwt(login.token).iat_ms).toBe(revokedAt + 1);
    const { cookie } = await land(login.token, tenant.dominio, {}, revokedAt - 20);
    expect(await readSession([cookieValue(cookie)], tenant.dominio, revokedAt)).toBeDefined();
    // A later revoke on a clock behind the first one's does not move the stamp back: what the first voided stays void.
    const voided = await issueLoginToken(subject, revokedAt - 50);
    await revokeLogins(tenant.id, subject.login, revokedAt - 100);
    expect(await refusal(land(voided, tenant.dominio, {}, revokedAt + 2))).toBe('revoked');
  });

  test('a token with an iat_ms that is not the instant of its iat is invalid', async () => {
    const { tenant, subject } = await tenantWithUser();
    const ours = (await currentKeyring()).keys.find((key) => key.retiredAt === undefined);
    if (!ours) throw new Error('the twin has a signing key');
    const now = midSecond();
    for (const iatMs of [now + 1000, now - 1000, now + 0.5, '1']) {
      const token = await new SignJWT({ login: subject.login, tid: subject.tenantId, iat_ms: iatMs })
        .setProtectedHeader({ alg: 'ES256', kid: ours.kid })
        .setIssuer('bi-tenant-admin')
        .setAudience(tenant.dominio)
        .setSubject(String(subject.userId))
        .setIssuedAt(Math.floor(now / 1000))
        .setExpirationTime(Math.floor(now / 1000) + 3600)
        .setJti(crypto.randomUUID())
        .sign(await importJWK(ours.privateJwk, 'ES256'));
      expect(await refusal(land(token, tenant.dominio, {}, now)), String(iatMs)).toBe('invalid');
    }
  });
});

describe('tokens, sessions and stamps from before milliseconds keep their meaning', () => {
  const midSecond = () => Math.floor(Date.now() / 1000) * 1000 + 500;

  /** A token as issued before `iat_ms`: its second only. */
  async function secondsToken(subject: Awaited<ReturnType<typeof tenantWithUser>>['subject'], iat: number) {
    const ours = (await currentKeyring()).keys.find((key) => key.retiredAt === undefined);
    if (!ours) throw new Error('the twin has a signing key');
    return new SignJWT({ login: subject.login, tid: subject.tenantId })
      .setProtectedHeader({ alg: 'ES256', kid: ours.kid, typ: 'JWT' })
      .setIssuer('bi-tenant-admin')
      .setAudience(subject.dominio)
      .setSubject(String(subject.userId))
      .setIssuedAt(iat)
      .setExpirationTime(iat + 3600)
      .setJti(crypto.randomUUID())
      .sign(await importJWK(ours.privateJwk, 'ES256'));
  }

  /** A session as opened before `createdAtMs`: its second only. */
  async function secondsSession(subject: Awaited<ReturnType<typeof tenantWithUser>>['subject'], createdAt: number) {
    const sessionId = randomBytes(32).toString('base64url');
    await insertSession(createHash('sha256').update(sessionId).digest('hex'), {
      tenantId: subject.tenantId,
      userId: subject.userId,
      login: subject.login,
      createdAt,
      expiresAt: createdAt + 8 * 3600,
    });
    return `__Host-bi_session=${sessionId}`;
  }

  test('a token and a session of the revoke’s second or earlier are void; of a later second, valid', async () => {
    const { tenant, subject } = await tenantWithUser();
    const revokedAt = midSecond();
    const second = Math.floor(revokedAt / 1000);
    const sameSecond = await secondsToken(subject, second);
    const earlier = await secondsToken(subject, second - 1);
    const sessions = [await secondsSession(subject, second), await secondsSession(subject, second - 1)];
    await revokeLogins(tenant.id, subject.login, revokedAt);
    const at = revokedAt + 1000;
    expect(await refusal(land(sameSecond, tenant.dominio, {}, at))).toBe('revoked');
    expect(await refusal(land(earlier, tenant.dominio, {}, at))).toBe('revoked');
    for (const session of sessions) expect(await readSession([session], tenant.dominio, at)).toBeUndefined();
    expect((await land(await secondsToken(subject, second + 1), tenant.dominio, {}, at)).location).toBe('/');
    expect(await readSession([await secondsSession(subject, second + 1)], tenant.dominio, at)).toBeDefined();
  });

  test('a user’s revokedBefore in seconds voids what was issued before that second, to the millisecond', async () => {
    const { tenant, subject } = await tenantWithUser();
    const stamp = Math.floor(Date.now() / 1000);
    // As the previous version's revoke wrote it (the next second) — also after a revoke of this version.
    await revokeLogins(tenant.id, subject.login, stamp * 1000 - 5000);
    await db().send(
      new UpdateCommand({
        TableName: tableName(),
        Key: stored.user.key({ tenantId: tenant.id, userId: subject.userId }),
        UpdateExpression: 'SET revokedBefore = :revokedBefore',
        ExpressionAttributeValues: { ':revokedBefore': stamp },
      }),
    );
    const at = stamp * 1000 + 10;
    expect(await refusal(land(await issueLoginToken(subject, stamp * 1000 - 1), tenant.dominio, {}, at))).toBe('revoked');
    expect(await refusal(land(await secondsToken(subject, stamp - 1), tenant.dominio, {}, at))).toBe('revoked');
    expect(await readSession([await secondsSession(subject, stamp - 1)], tenant.dominio, at)).toBeUndefined();
    expect((await land(await issueLoginToken(subject, stamp * 1000), tenant.dominio, {}, at)).location).toBe('/');
    expect((await land(await secondsToken(subject, stamp), tenant.dominio, {}, at)).location).toBe('/');
    expect(await readSession([await secondsSession(subject, stamp)], tenant.dominio, at)).toBeDefined();
  });

  test('a tenant’s sessionsValidAfter in seconds voids what was issued in that second or before', async () => {
    const { tenant, subject } = await tenantWithUser();
    const stamp = Math.floor(Date.now() / 1000);
    await db().send(
      new UpdateCommand({
        TableName: tableName(),
        Key: stored.tenant.key({ tenantId: tenant.id }),
        UpdateExpression: 'SET sessionsValidAfter = :stamp',
        ExpressionAttributeValues: { ':stamp': stamp },
      }),
    );
    const at = stamp * 1000 + 1010;
    expect(await refusal(land(await issueLoginToken(subject, stamp * 1000 + 999), tenant.dominio, {}, at))).toBe('revoked');
    expect(await refusal(land(await secondsToken(subject, stamp), tenant.dominio, {}, at))).toBe('revoked');
    expect(await readSession([await secondsSession(subject, stamp)], tenant.dominio, at)).toBeUndefined();
    expect((await land(await issueLoginToken(subject, stamp * 1000 + 1000), tenant.dominio, {}, at)).location).toBe('/');
    expect((await land(await secondsToken(subject, stamp + 1), tenant.dominio, {}, at)).location).toBe('/');
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
