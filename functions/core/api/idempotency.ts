import { createCipheriv, createDecipheriv, createHash, randomBytes, randomUUID } from 'node:crypto';
import { DeleteCommand, GetCommand, PutCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { badRequest, conflict } from '../errors.ts';
import { db, tableName, writeIf } from '../store/dynamo.ts';
import { keys } from '../store/keys.ts';
import type { ApiResponse } from './http-handler.ts';

const retentionSeconds = 24 * 60 * 60;
/** Longer than any function's time-out: a claim older than this belongs to a request that died. */
const claimLifetimeMs = 60_000;
const waitForOtherRequestMs = 5_000;
const pollIntervalMs = 100;
const keyPattern = /^[\x21-\x7e]{1,255}$/;

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
  if (!keyPattern.test(call.key)) {
    throw badRequest('Idempotency-Key must be 1 to 255 printable ASCII characters', [
      { location: 'header', pointer: '/idempotency-key', message: 'is invalid' },
    ]);
  }
  const itemKey = keys.idempotency(call.scope, sha256(`key:${call.key}`));
  const fingerprint = sha256(`request:${call.request}`);
  const secret = createHash('sha256').update(`response:${call.scope}:${call.key}`).digest();
  const deadline = Date.now() + waitForOtherRequestMs;

  for (;;) {
    const claimId = randomUUID();
    if (await claim(itemKey, fingerprint, claimId)) {
      let response: ApiResponse;
      try {
        response = await execute();
      } catch (error) {
        await release(itemKey, claimId);
        throw error;
      }
      if (response.status < 500) await complete(itemKey, claimId, encrypt(secret, JSON.stringify(response)));
      else await release(itemKey, claimId);
      return response;
    }
    const existing = (await db().send(new GetCommand({ TableName: tableName(), Key: itemKey, ConsistentRead: true }))).Item;
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

async function claim(itemKey: Record<string, string>, fingerprint: string, claimId: string): Promise<boolean> {
  const now = Date.now();
  return writeIf(() =>
    db().send(
      new PutCommand({
        TableName: tableName(),
        Item: {
          ...itemKey,
          state: 'in_progress',
          fingerprint,
          claimId,
          claimedUntil: now + claimLifetimeMs,
          expiresAt: Math.floor(now / 1000) + retentionSeconds,
        },
        // Free, or held by a request that died, or expired but not yet swept by TTL.
        ConditionExpression:
          'attribute_not_exists(pk) OR (#state = :inProgress AND claimedUntil < :now) OR expiresAt < :nowSeconds',
        ExpressionAttributeNames: { '#state': 'state' },
        ExpressionAttributeValues: { ':inProgress': 'in_progress', ':now': now, ':nowSeconds': Math.floor(now / 1000) },
      }),
    ),
  );
}

async function complete(itemKey: Record<string, string>, claimId: string, response: string): Promise<void> {
  await db().send(
    new UpdateCommand({
      TableName: tableName(),
      Key: itemKey,
      UpdateExpression: 'SET #state = :done, #response = :response REMOVE claimedUntil',
      ConditionExpression: 'claimId = :claimId',
      ExpressionAttributeNames: { '#state': 'state', '#response': 'response' },
      ExpressionAttributeValues: { ':done': 'done', ':response': response, ':claimId': claimId },
    }),
  );
}

async function release(itemKey: Record<string, string>, claimId: string): Promise<void> {
  // A claim that is no longer this one (expired and taken over) is not ours to release.
  await writeIf(() =>
    db().send(
      new DeleteCommand({
        TableName: tableName(),
        Key: itemKey,
        ConditionExpression: 'claimId = :claimId',
        ExpressionAttributeValues: { ':claimId': claimId },
      }),
    ),
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
