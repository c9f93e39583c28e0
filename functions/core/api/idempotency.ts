import { createCipheriv, createDecipheriv, createHash, randomBytes, randomUUID } from 'node:crypto';
import { badRequest, conflict } from '#functions/core/errors.ts';
import type { ApiResponse } from './http-handler.ts';
import {
  completeClaim,
  findIdempotencyRecord,
  type IdempotencySlot,
  insertClaim,
  releaseClaim,
} from './idempotency-repository.ts';

/** How long a key answers with its first answer (the API description says so too). */
export const idempotencyRetentionHours = 24;
const retentionSeconds = idempotencyRetentionHours * 60 * 60;
/** Longer than any function's time-out: a claim older than this belongs to a request that died. */
const claimLifetimeMs = 60_000;
const waitForOtherRequestMs = 5_000;
const pollIntervalMs = 100;
export const idempotencyKeyPattern = /^[\x21-\x7e]{1,255}$/;

export interface IdempotentCall {
  /** Who is calling which route: keys never collide across callers or routes. */
  scope: string;
  /** The Idempotency-Key header, if any. */
  key: string | undefined;
  /** What the request asked for; the same key with another request is refused. */
  request: string;
}

/**
 * Runs `execute` at most once per (scope, key) within 24 hours and replays its first successful
 * answer. A concurrent duplicate waits for the first to finish. Responses can hold secrets (a new
 * tenant's token), so they are stored encrypted under a key derived from the Idempotency-Key,
 * which is itself stored only as a hash: the table alone cannot reveal them.
 */
export async function withIdempotency(call: IdempotentCall, execute: () => Promise<ApiResponse>): Promise<ApiResponse> {
  if (call.key === undefined) return execute();
  if (!idempotencyKeyPattern.test(call.key)) {
    throw badRequest('Idempotency-Key must be 1 to 255 printable ASCII characters', [
      { location: 'header', pointer: '/idempotency-key', message: 'is invalid' },
    ]);
  }
  const slot: IdempotencySlot = { scope: call.scope, keyHash: sha256(`key:${call.key}`) };
  const fingerprint = sha256(`request:${call.request}`);
  const secret = createHash('sha256').update(`response:${call.scope}:${call.key}`).digest();
  const deadline = Date.now() + waitForOtherRequestMs;

  for (;;) {
    const claimId = randomUUID();
    if (await claim(slot, fingerprint, claimId)) {
      let response: ApiResponse;
      try {
        response = await execute();
      } catch (error) {
        await releaseClaim(slot, claimId);
        throw error;
      }
      if (response.status < 500) await completeClaim(slot, claimId, encrypt(secret, JSON.stringify(response)));
      else await releaseClaim(slot, claimId);
      return response;
    }
    const existing = await findIdempotencyRecord(slot);
    if (existing === undefined) continue; // released meanwhile: claim again
    if (existing.fingerprint !== fingerprint) {
      throw conflict('This Idempotency-Key was already used with a different request', 'idempotency_key_reused');
    }
    if (existing.state === 'done') {
      const replay = JSON.parse(decrypt(secret, existing.response)) as ApiResponse;
      return { ...replay, headers: { ...replay.headers, 'idempotent-replayed': 'true' } };
    }
    if (Date.now() >= deadline) {
      throw conflict('A request with this Idempotency-Key is still in progress', 'idempotency_key_in_progress');
    }
    await new Promise((resolve) => setTimeout(resolve, pollIntervalMs));
  }
}

function claim(slot: IdempotencySlot, fingerprint: string, claimId: string): Promise<boolean> {
  const now = Date.now();
  return insertClaim(
    slot,
    { fingerprint, claimId, claimedUntil: now + claimLifetimeMs, expiresAt: Math.floor(now / 1000) + retentionSeconds },
    now,
  );
}

const sha256 = (text: string) => createHash('sha256').update(text, 'utf8').digest('hex');

function encrypt(secret: Buffer, plaintext: string): string {
  const iv = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', secret, iv);
  const ciphertext = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
  return Buffer.concat([iv, cipher.getAuthTag(), ciphertext]).toString('base64');
}

function decrypt(secret: Buffer, stored: string): string {
  const bytes = Buffer.from(stored, 'base64');
  const decipher = createDecipheriv('aes-256-gcm', secret, bytes.subarray(0, 12));
  decipher.setAuthTag(bytes.subarray(12, 28));
  return Buffer.concat([decipher.update(bytes.subarray(28)), decipher.final()]).toString('utf8');
}
