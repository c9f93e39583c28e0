import { createCipheriv, createDecipheriv, createHash, randomBytes, randomUUID } from 'node:crypto';
import { gunzipSync, gzipSync } from 'node:zlib';
import { badRequest, conflict } from '#functions/core/errors.ts';
import { logger } from '#functions/core/observability/logger.ts';
import { type Resumable, unrecorded } from '#functions/core/store/resumable.ts';
import type { ApiResponse } from './http-handler.ts';
import {
  abandonSlot,
  checkpointItem,
  claimFreshSlot,
  completeSlot,
  completionItem,
  findIdempotencyRecord,
  type IdempotencySlot,
  takeOverSlot,
} from './idempotency-repository.ts';

/** How long a key answers with its first answer (the API description says so too). */
export const idempotencyRetentionHours = 24;
const retentionSeconds = idempotencyRetentionHours * 60 * 60;
/** How long a duplicate waits for the attempt in progress before answering 409 with Retry-After. */
const waitForOtherAttemptMs = 5_000;
const pollIntervalMs = 100;
/** An answer kept for replay is gzipped and encrypted; past this it would not fit in its item, and is not kept. */
const maxStoredAnswerBytes = 300 * 1024;
export const idempotencyKeyPattern = /^[\x21-\x7e]{1,255}$/;

export interface IdempotentCall {
  /** Who is calling which route: keys never collide across callers or routes. */
  scope: string;
  /** The Idempotency-Key header, if any. */
  key: string | undefined;
  /** What the request asked for; the same key with another request is refused. */
  request: string;
  /** Epoch milliseconds when this invocation's function times out: a claim lasts until then, no longer. */
  deadline: number;
  /**
   * API Gateway's id of this request, unique to it: the request key when there is no Idempotency-Key
   * (a reload's deduplication ids are made of it). Never the caller's X-Request-Id, which any caller
   * may send twice.
   */
  gatewayRequestId: string;
}

/** What a handler of an idempotent route hands the operation it runs. */
export interface Attempt {
  /**
   * The record of this request for the operation's transactions: `answerOf` turns the operation's
   * result into this route's answer, which the operation's last transaction stores for replay.
   */
  resumable<Result, Progress = never>(answerOf: (result: Result) => ApiResponse): Resumable<Result, Progress>;
  /** The same for every attempt of one request (derived from its Idempotency-Key), else this invocation's own. */
  requestKey: string;
}

/**
 * Runs an idempotent route's request at most once per (scope, key) within 24 hours and replays
 * its first answer. The answer is stored in the same transaction as the operation's last write
 * (`Attempt.resumable`), so a crash between the two cannot happen; an operation of several steps
 * records checkpoints the same way, and a retry after its deadline resumes from the last one. A
 * concurrent duplicate waits for the attempt in progress (up to 5 s, then 409 with Retry-After).
 * Answers and checkpoints can hold secrets (a new tenant's token), so they are stored encrypted
 * under a key derived from the Idempotency-Key, which is itself stored only as a hash.
 */
export async function withIdempotency(call: IdempotentCall, execute: (attempt: Attempt) => Promise<ApiResponse>) {
  if (call.key === undefined) {
    return execute({ resumable: () => unrecorded(), requestKey: call.gatewayRequestId });
  }
  if (!idempotencyKeyPattern.test(call.key)) {
    throw badRequest(
      'Idempotency-Key must be 1 to 255 printable ASCII characters',
      [{ location: 'header', pointer: '/idempotency-key', message: 'is invalid' }],
      'invalid_idempotency_key',
    );
  }
  const slot: IdempotencySlot = { scope: call.scope, keyHash: sha256(`key:${call.key}`) };
  const fingerprint = sha256(`request:${call.request}`);
  const secret = createHash('sha256').update(`response:${call.scope}:${call.key}`).digest();
  const requestKey = sha256(`request-key:${call.scope}:${call.key}`).slice(0, 32);
  const waitUntil = Date.now() + waitForOtherAttemptMs;

  for (;;) {
    const claimId = randomUUID();
    const now = Date.now();
    const claim = { fingerprint, claimId, claimedUntil: call.deadline, expiresAt: Math.floor(now / 1000) + retentionSeconds };
    if (await claimFreshSlot(slot, claim, now)) {
      return runAttempt(slot, claimId, secret, requestKey, undefined, execute);
    }
    const taken = await takeOverSlot(slot, claim, now);
    if (taken) {
      const progress = taken.progress === undefined ? undefined : (JSON.parse(open(secret, taken.progress)) as unknown);
      return runAttempt(slot, claimId, secret, requestKey, progress, execute);
    }
    const existing = await findIdempotencyRecord(slot);
    if (existing === undefined) continue; // freed meanwhile: claim again
    if (existing.fingerprint !== fingerprint) {
      throw conflict('This Idempotency-Key was already used with a different request', 'idempotency_key_reused');
    }
    if (existing.state === 'done') return replay(secret, existing.response);
    if (existing.claimedUntil < Date.now()) continue; // its holder's deadline passed meanwhile: take over
    if (Date.now() >= waitUntil) {
      const seconds = Math.max(1, Math.ceil((existing.claimedUntil - Date.now()) / 1000));
      throw conflict('A request with this Idempotency-Key is still in progress', 'idempotency_key_in_progress', [], {
        'retry-after': String(seconds),
      });
    }
    await new Promise((resolve) => setTimeout(resolve, pollIntervalMs));
  }
}

/** One attempt holding the slot: the operation, then the slot closed, freed or left to a retry. */
async function runAttempt(
  slot: IdempotencySlot,
  claimId: string,
  secret: Buffer,
  requestKey: string,
  resumeFrom: unknown,
  execute: (attempt: Attempt) => Promise<ApiResponse>,
): Promise<ApiResponse> {
  const sealedAnswer = (answer: ApiResponse) => {
    const sealed = seal(secret, JSON.stringify(answer));
    return sealed.length <= maxStoredAnswerBytes ? sealed : undefined;
  };
  const attempt: Attempt = {
    requestKey,
    resumable: <Result, Progress>(answerOf: (result: Result) => ApiResponse): Resumable<Result, Progress> => ({
      finish: (result) => [completionItem(slot, claimId, sealedAnswer(answerOf(result)))],
      checkpoint: (progress) => [checkpointItem(slot, claimId, seal(secret, JSON.stringify(progress)))],
      resumeFrom: resumeFrom as Progress | undefined,
    }),
  };
  let response: ApiResponse;
  try {
    response = await execute(attempt);
  } catch (error) {
    await settle(() => abandonSlot(slot, claimId));
    throw error;
  }
  await settle(() => (response.status >= 500 ? abandonSlot(slot, claimId) : completeSlot(slot, claimId, sealedAnswer(response))));
  return response;
}

/**
 * Closing or freeing the slot after the operation: if that write fails, the caller still gets the
 * operation's own answer or error, and the slot frees itself at the attempt's deadline (a retry then
 * runs the operation again, which every route without its answer in its own last transaction
 * tolerates: a reload's loads keep their deduplication ids).
 */
async function settle(write: () => Promise<void>): Promise<void> {
  try {
    await write();
  } catch (error) {
    logger.error('The Idempotency-Key record could not be settled; it frees itself at the deadline', {
      error: error as Error,
    });
  }
}

function replay(secret: Buffer, sealed: string | undefined): ApiResponse {
  if (sealed === undefined) {
    throw conflict(
      'The first request with this Idempotency-Key succeeded, but its answer was too large to keep: read the result instead',
      'idempotency_answer_not_kept',
    );
  }
  const answer = JSON.parse(open(secret, sealed)) as ApiResponse;
  return { ...answer, headers: { ...answer.headers, 'idempotent-replayed': 'true' } };
}

const sha256 = (text: string) => createHash('sha256').update(text, 'utf8').digest('hex');

/** Gzipped, then AES-256-GCM: an answer of a few hundred kilobytes of JSON still fits its item. */
function seal(secret: Buffer, plaintext: string): string {
  const iv = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', secret, iv);
  const ciphertext = Buffer.concat([cipher.update(gzipSync(plaintext)), cipher.final()]);
  return Buffer.concat([iv, cipher.getAuthTag(), ciphertext]).toString('base64');
}

function open(secret: Buffer, sealed: string): string {
  const bytes = Buffer.from(sealed, 'base64');
  const decipher = createDecipheriv('aes-256-gcm', secret, bytes.subarray(0, 12));
  decipher.setAuthTag(bytes.subarray(12, 28));
  const plain = Buffer.concat([decipher.update(bytes.subarray(28)), decipher.final()]);
  // Answers stored by the version before gzip (kept 24 hours) are the JSON itself.
  return (isGzip(plain) ? gunzipSync(plain) : plain).toString('utf8');
}

const isGzip = (bytes: Buffer) => bytes[0] === 0x1f && bytes[1] === 0x8b;
