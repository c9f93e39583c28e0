/**
 * Forgery costs nothing downstream: a signed token whose MAC does not verify is refused before any
 * DynamoDB request (counted on the store's own client), while the lookup stays the authority, so a
 * revoked token still fails at once.
 */
import { randomBytes } from 'node:crypto';
import { UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { afterAll, afterEach, beforeAll, describe, expect, test } from 'vitest';
import { authenticate } from '#functions/core/auth/principals.ts';
import { hashToken, newToken, parseSignedToken, tokenMac } from '#functions/core/auth/tokens.ts';
import { createClient, rotateClientToken } from '#functions/core/clients/clients.ts';
import { db, tableName, transact } from '#functions/core/store/dynamo.ts';
import * as stored from '#functions/core/store/entity-declarations.ts';

let requests = 0;
/** Runs once per request sent to DynamoDB (the deserialize step is below the retries). */
const counter: Parameters<ReturnType<typeof db>['middlewareStack']['add']>[0] = (next) => (args) => {
  requests++;
  return next(args);
};
const middlewareName = 'countDynamoRequestsForTokenForgeryTest';

beforeAll(() => {
  db().middlewareStack.add(counter, { step: 'deserialize', name: middlewareName });
});
afterAll(() => {
  db().middlewareStack.remove(middlewareName);
});
afterEach(() => {
  delete process.env.UNSIGNED_TOKENS;
});

/** What authenticating `token` on a client route answers, and how many DynamoDB requests it made. */
async function outcome(token: string): Promise<{ answer: unknown; requests: number }> {
  const before = requests;
  const answer = await authenticate(`Bearer ${token}`, ['client']).then(
    (principal) => principal,
    (error: { status?: number; message?: string; headers?: Record<string, string> }) => ({
      status: error.status,
      message: error.message,
      challenge: error.headers?.['www-authenticate'],
    }),
  );
  return { answer, requests: requests - before };
}

const invalid = { status: 401, message: 'Invalid or expired token', challenge: 'Bearer error="invalid_token"' };
const otherCharacter = (char: string) => (char === 'A' ? 'B' : 'A');

describe('a forged signed token', () => {
  test('a valid token is looked up (the counter sees the store)', async () => {
    const { client, token } = await createClient('Forgery baseline');
    expect(await outcome(token)).toEqual({
      answer: { kind: 'client', clientId: client.clientId, tokenId: hashToken(token).slice(0, 16) },
      requests: 1,
    });
  });

  test('is refused without a single DynamoDB request, however it is forged', async () => {
    const { client, token } = await createClient('Forgery victim');
    const signed = parseSignedToken(token);
    if (!signed) throw new Error(`Not a signed token: ${token}`);
    const random = randomBytes(32).toString('base64url');
    const forgeries = {
      'MAC changed in its last character': `${token.slice(0, -1)}${otherCharacter(token.at(-1) as string)}`,
      'MAC changed in its first character': `${signed.signedText}.${otherCharacter(signed.mac[0] as string)}${signed.mac.slice(1)}`,
      'random part changed, MAC kept': `${signed.signedText.slice(0, -1)}${otherCharacter(signed.signedText.at(-1) as string)}.${signed.mac}`,
      "another client's id, MAC kept": token.replace(
        `cli_${signed.keyId}.${client.clientId}.`,
        `cli_${signed.keyId}.${client.clientId + 1}.`,
      ),
      'a key id the keyring does not have': `cli_999999.${client.clientId}.${random}.${tokenMac(`cli_999999.${client.clientId}.${random}`, 'guess')}`,
      'a MAC made with a guessed key': `cli_${signed.keyId}.${client.clientId}.${random}.${tokenMac(`cli_${signed.keyId}.${client.clientId}.${random}`, 'guess')}`,
    };
    for (const [how, forged] of Object.entries(forgeries)) {
      expect(forged, how).not.toBe(token);
      expect(await outcome(forged), how).toEqual({ answer: invalid, requests: 0 });
    }
    // The genuine token still works after all that.
    expect((await outcome(token)).answer).toEqual({
      kind: 'client',
      clientId: client.clientId,
      tokenId: hashToken(token).slice(0, 16),
    });
  });

  test('revocation stays immediate: a rotated-out token, with its MAC still right, fails at once', async () => {
    const { client, token } = await createClient('Forgery rotation');
    expect((await outcome(token)).answer).toEqual({
      kind: 'client',
      clientId: client.clientId,
      tokenId: hashToken(token).slice(0, 16),
    });
    const fresh = await rotateClientToken(client.clientId, { previousValidForSeconds: 0 });
    expect(await outcome(token)).toEqual({ answer: invalid, requests: 1 });
    expect((await outcome(fresh?.token ?? '')).answer).toEqual({
      kind: 'client',
      clientId: client.clientId,
      tokenId: hashToken(fresh?.token ?? '').slice(0, 16),
    });
  });

  test('a previous token is checked like a current one: forged, refused without a request; past its expiry, 401', async () => {
    const { client, token } = await createClient('Forgery previous');
    const rotated = await rotateClientToken(client.clientId);
    expect(rotated?.previousExpiresAt).toEqual(expect.any(String));
    const signed = parseSignedToken(token);
    if (!signed) throw new Error(`Not a signed token: ${token}`);
    const forged = `${signed.signedText}.${otherCharacter(signed.mac.charAt(0))}${signed.mac.slice(1)}`;
    expect(await outcome(forged)).toEqual({ answer: invalid, requests: 0 });
    expect(await outcome(token)).toEqual({
      answer: { kind: 'client', clientId: client.clientId, tokenId: hashToken(token).slice(0, 16) },
      requests: 1,
    });
    // Its grace period over, as the clock would make it: refused as an unknown token, whether or not TTL removed it yet.
    await db().send(
      new UpdateCommand({
        TableName: tableName(),
        Key: stored.token.key({ tokenHash: hashToken(token) }),
        UpdateExpression: 'SET expiresAt = :past',
        ExpressionAttributeValues: { ':past': Math.floor(Date.now() / 1000) - 1 },
      }),
    );
    expect(await outcome(token)).toEqual({ answer: invalid, requests: 1 });
    expect((await outcome(rotated?.token ?? '')).answer).toEqual({
      kind: 'client',
      clientId: client.clientId,
      tokenId: hashToken(rotated?.token ?? '').slice(0, 16),
    });
  });

  test('a token item that names another owner than the signed token does is refused', async () => {
    const { client } = await createClient('Forgery owner');
    const token = await newToken('client', { clientId: client.clientId });
    await transact([
      {
        Put: {
          TableName: tableName(),
          Item: { ...stored.token.key({ tokenHash: hashToken(token) }), kind: 'client', clientId: client.clientId + 1_000_000 },
        },
      },
    ]);
    expect(await outcome(token)).toEqual({ answer: invalid, requests: 1 });
  });
});

describe('unsigned tokens', () => {
  test('are looked up while accepted (the default), refused without I/O with UNSIGNED_TOKENS=refuse', async () => {
    const chosen = `cli_${randomBytes(32).toString('base64url')}`;
    const { client } = await createClient('Unsigned holder', chosen);
    expect(await outcome(chosen)).toEqual({
      answer: { kind: 'client', clientId: client.clientId, tokenId: hashToken(chosen).slice(0, 16) },
      requests: 1,
    });
    process.env.UNSIGNED_TOKENS = 'refuse';
    expect(await outcome(chosen)).toEqual({ answer: invalid, requests: 0 });
    expect(await outcome('cli_local_demo_token_0123456789')).toEqual({ answer: invalid, requests: 0 });
  });
});
