import { randomUUID } from 'node:crypto';
import { errors, importJWK, type JWTPayload, jwtVerify, SignJWT } from 'jose';
import { apiConfig } from '#functions/core/config.ts';
import { activeSigningKey, loginTokenLifetimeSeconds, verificationKey } from './signing-keys.ts';

export interface LoginClaims extends JWTPayload {
  sub: string;
  login: string;
  tid: number;
  iat: number;
  exp: number;
  jti: string;
}

/** Spec 4.6 / DESIGN 7: an ES256 JWT for one user of one tenant, valid one hour, reusable until then. */
export async function issueLoginToken(
  subject: { tenantId: number; dominio: string; userId: number; login: string },
  now = Date.now(),
): Promise<string> {
  const key = await activeSigningKey();
  const issuedAt = Math.floor(now / 1000);
  return new SignJWT({ login: subject.login, tid: subject.tenantId })
    .setProtectedHeader({ alg: 'ES256', kid: key.kid, typ: 'JWT' })
    .setIssuer(apiConfig().loginTokenIssuer)
    .setAudience(subject.dominio)
    .setSubject(String(subject.userId))
    .setIssuedAt(issuedAt)
    .setExpirationTime(issuedAt + loginTokenLifetimeSeconds)
    .setJti(randomUUID())
    .sign(await importJWK(key.privateJwk, 'ES256'));
}

export type TokenProblem = 'expired' | 'invalid' | 'malformed';

export class LoginTokenError extends Error {
  constructor(readonly problem: TokenProblem) {
    super(`Login token ${problem}`);
  }
}

/**
 * Verifies a login token for the tenant host it was presented on. The algorithm is pinned to
 * ES256 (so `alg: none` and HS256 signed with the public key are refused); the key must be one of
 * ours by `kid`; issuer, audience (= host), expiry and the claims' types are checked.
 */
export async function verifyLoginToken(token: string, host: string, now = Date.now()): Promise<LoginClaims> {
  try {
    const { payload } = await jwtVerify(
      token,
      async (header) => {
        const key = await verificationKey(header.kid, now);
        if (!key) throw new LoginTokenError('invalid');
        return importJWK(key.publicJwk, 'ES256');
      },
      {
        algorithms: ['ES256'],
        issuer: apiConfig().loginTokenIssuer,
        audience: host,
        currentDate: new Date(now),
        requiredClaims: ['sub', 'iat', 'exp', 'jti'],
      },
    );
    if (typeof payload.login !== 'string' || !Number.isSafeInteger(payload.tid) || !/^[1-9][0-9]*$/.test(payload.sub ?? '')) {
      throw new LoginTokenError('invalid');
    }
    return payload as LoginClaims;
  } catch (error) {
    if (error instanceof LoginTokenError) throw error;
    if (error instanceof errors.JWTExpired) throw new LoginTokenError('expired');
    // Not a JWT at all (bad segments, bad JSON, bad base64): malformed. A well-formed token that
    // fails a check (signature, algorithm, key, issuer, audience, claims): invalid.
    const wellFormed =
      error instanceof errors.JOSEError && !(error instanceof errors.JWSInvalid) && !(error instanceof errors.JWTInvalid);
    throw new LoginTokenError(wellFormed ? 'invalid' : 'malformed');
  }
}
