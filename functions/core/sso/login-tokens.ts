import { randomUUID } from 'node:crypto';
import { errors, importJWK, type JWTPayload, jwtVerify, SignJWT } from 'jose';
import { apiConfig } from '#functions/core/config.ts';
import { activeSigningKey, loginTokenLifetimeSeconds, verificationKey } from './signing-keys.ts';

export interface LoginClaims extends JWTPayload {
  sub: string;
  login: string;
  tid: number;
  iat: number;
  /** The issue instant in epoch milliseconds (`iat` is its second); absent from tokens issued before it. */
  iat_ms?: number;
  exp: number;
  jti: string;
}

/**
 * When a token was issued, to the millisecond, as revocations are compared (revocation.ts). A token
 * from before `iat_ms` has only its second: the second's start, so a revocation in that second voids
 * it, as it did.
 */
export const issuedAtMs = (claims: LoginClaims): number => claims.iat_ms ?? claims.iat * 1000;

/**
 * Spec 4.6 / DESIGN 7: an ES256 JWT for one user of one tenant, valid one hour, reusable until then.
 * `issuedAtMs` (default `now`) is carried as `iat_ms` beside the standard `iat` (seconds); the
 * expiry is an hour from `now`.
 */
export async function issueLoginToken(
  subject: { tenantId: number; dominio: string; userId: number; login: string },
  now = Date.now(),
  issuedAtMs = now,
): Promise<string> {
  const key = await activeSigningKey();
  return new SignJWT({ login: subject.login, tid: subject.tenantId, iat_ms: issuedAtMs })
    .setProtectedHeader({ alg: 'ES256', kid: key.kid, typ: 'JWT' })
    .setIssuer(apiConfig().loginTokenIssuer)
    .setAudience(subject.dominio)
    .setSubject(String(subject.userId))
    .setIssuedAt(Math.floor(issuedAtMs / 1000))
    .setExpirationTime(Math.floor(now / 1000) + loginTokenLifetimeSeconds)
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
    // `iat_ms`, when there, is the instant of `iat`'s second.
    const { iat_ms: ms } = payload;
    if (ms !== undefined && !(Number.isSafeInteger(ms) && Math.floor(Number(ms) / 1000) === payload.iat)) {
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
