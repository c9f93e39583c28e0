import { createHash, randomBytes } from 'node:crypto';
import { UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { describe, expect, test } from 'vitest';
import { withIdempotency } from '#functions/core/api/idempotency.ts';
import { authenticate } from '#functions/core/auth/principals.ts';
import { stampTokenUse } from '#functions/core/auth/token-use-repository.ts';
import { hashToken, newToken } from '#functions/core/auth/tokens.ts';
import { findClient, listClients } from '#functions/core/clients/client-repository.ts';
import { createClient, rotateClientToken } from '#functions/core/clients/clients.ts';
import { ServiceError } from '#functions/core/errors.ts';
import {
  db,
  getAll,
  getItem,
  maxItemsReadPerFilteredPage,
  nextId,
  nextTenantId,
  putAll,
  queryFilteredPage,
  tableName,
} from '#functions/core/store/dynamo.ts';
import * as stored from '#functions/core/store/entity-declarations.ts';
import { transaction } from '#functions/core/store/transaction.ts';
import { findTenant, insertTenant, type TenantRecord } from '#functions/core/tenants/tenant-repository.ts';

describe('atomic counters', () => {
  test('concurrent callers never get the same id', async () => {
    const name = `test-${crypto.randomUUID()}`;
    const ids = await Promise.all(Array.from({ length: 50 }, () => nextId(name)));
    expect(new Set(ids).size).toBe(50);
    expect(Math.min(...ids)).toBe(1);
    expect(Math.max(...ids)).toBe(50);
  });

  test("a tenant's counters are its own: each starts at 1, apart from the same name elsewhere", async () => {
    const name = `test-${crypto.randomUUID()}`;
    const [first, second] = [1_000_001, 1_000_002];
    const [a, b, elsewhere] = await Promise.all([
      nextTenantId(first, name),
      nextTenantId(first, name),
      nextTenantId(second, name),
    ]);
    expect([a, b].sort()).toEqual([1, 2]);
    expect(elsewhere).toBe(1);
    expect(await nextTenantId(second, name)).toBe(2);
  });
});

describe('batch reads', () => {
  test('a key asked for twice is read once (BatchGetItem refuses duplicate keys); missing keys are left out', async () => {
    const name = `test-${crypto.randomUUID()}`;
    await nextId(name);
    const counter = stored.idCounter.key({ name });
    const items = await getAll<{ value: number }>([counter, { ...counter }, stored.idCounter.key({ name: `${name}-missing` })]);
    expect(items).toEqual([expect.objectContaining({ ...counter, value: 1 })]);
  });
});

describe('clients and their tokens', () => {
  test('a client token resolves to its client with one lookup; only its hash is stored', async () => {
    const { client, token } = await createClient('Integrator');
    expect(await authenticate(`Bearer ${token}`, ['client'])).toEqual({
      kind: 'client',
      clientId: client.clientId,
      tokenId: hashToken(token).slice(0, 16),
    });
    const tokenItem = await getItem(stored.token.key({ tokenHash: hashToken(token) }));
    expect(tokenItem).toMatchObject({ kind: 'client', clientId: client.clientId });
    expect(JSON.stringify(await findClient(client.clientId))).not.toContain(token);
    expect((await listClients()).map((listed) => listed.clientId)).toContain(client.clientId);
  });

  test('rotation with no grace swaps the token atomically; a given token can be installed', async () => {
    const { client, token } = await createClient('Rotating');
    const chosen = await newToken('client', { clientId: client.clientId });
    expect(await rotateClientToken(client.clientId, { token: chosen, previousValidForSeconds: 0 })).toEqual({
      id: client.clientId,
      token: chosen,
      previousExpiresAt: null,
    });
    await expect(authenticate(`Bearer ${token}`, ['client'])).rejects.toMatchObject({ status: 401 });
    expect(await authenticate(`Bearer ${chosen}`, ['client'])).toMatchObject({ clientId: client.clientId });
    expect(await rotateClientToken(987654321)).toBeUndefined();
  });

  test("a token's use is stamped on it and on its owner at most once a minute, never failing, never making an item", async () => {
    const { client, token } = await createClient('Stamped');
    const tokenHash = hashToken(token);
    const owner = { kind: 'client', clientId: client.clientId } as const;
    const used = async () => ({
      onToken: (await getItem<{ lastUsedAt?: string }>(stored.token.key({ tokenHash })))?.lastUsedAt,
      onOwner: (await findClient(client.clientId))?.tokensLastUsedAt,
    });
    const stamps: Promise<void>[] = [];
    const keepAlive = (work: Promise<void>) => void stamps.push(work);
    await authenticate(`Bearer ${token}`, ['client'], keepAlive);
    expect(stamps).toHaveLength(1);
    await Promise.all(stamps);
    const { onToken: first } = await used();
    expect(await used()).toEqual({ onToken: expect.any(String), onOwner: { [tokenHash]: first } });
    // Within the minute the token item says it is not due: not even tried.
    await authenticate(`Bearer ${token}`, ['client'], keepAlive);
    expect(stamps).toHaveLength(1);
    // Sent all the same (two requests that both read it due): rewrites nothing within the minute.
    const at = Date.parse(first ?? '');
    await stampTokenUse(tokenHash, owner, at + 30_000);
    expect(await used()).toEqual({ onToken: first, onOwner: { [tokenHash]: first } });
    // A minute on, written on both.
    const later = new Date(at + 60_001).toISOString();
    await stampTokenUse(tokenHash, owner, at + 60_001);
    expect(await used()).toEqual({ onToken: later, onOwner: { [tokenHash]: later } });
    // Only the stamp that won the token's writes the owner: one that lost it (the token stamped within the
    // minute) leaves the owner as it is, however old the owner's entry.
    const long = '2000-01-01T00:00:00.000Z';
    await db().send(
      new UpdateCommand({
        TableName: tableName(),
        Key: stored.client.key(client),
        UpdateExpression: 'SET tokensLastUsedAt.#hash = :long',
        ExpressionAttributeNames: { '#hash': tokenHash },
        ExpressionAttributeValues: { ':long': long },
      }),
    );
    await stampTokenUse(tokenHash, owner, at + 90_000);
    expect(await used()).toEqual({ onToken: later, onOwner: { [tokenHash]: long } });
    // An owner written before uses were kept gets them with its first stamp.
    await db().send(
      new UpdateCommand({ TableName: tableName(), Key: stored.client.key(client), UpdateExpression: 'REMOVE tokensLastUsedAt' }),
    );
    const third = new Date(at + 130_000).toISOString();
    await stampTokenUse(tokenHash, owner, at + 130_000);
    expect(await used()).toEqual({ onToken: third, onOwner: { [tokenHash]: third } });
    // A token revoked meanwhile, an owner gone: nothing made, nothing thrown.
    const gone = 'f'.repeat(64);
    await stampTokenUse(gone, { kind: 'client', clientId: 987_654_321 }, at);
    expect(await getItem(stored.token.key({ tokenHash: gone }))).toBeUndefined();
    expect(await findClient(987_654_321)).toBeUndefined();
  });

  test('a client token on a route for tenant tokens is refused, 403 naming the scheme it needs', async () => {
    const { token } = await createClient('Wrong door');
    await expect(authenticate(`Bearer ${token}`, ['tenant'])).rejects.toMatchObject({ status: 403, code: 'wrong_token_kind' });
  });
});

describe('tenant writes hold together', () => {
  test('a tenant whose token cannot be written is not written either', async () => {
    // An operator's chosen (unsigned) token: a signed one would be refused before the transaction, as signed for another owner.
    const { token: takenToken } = await createClient('Holder of a token', `cli_${randomBytes(32).toString('base64url')}`);
    const tenantId = await nextId('tenant');
    const tenant: TenantRecord = {
      tenantId,
      clientId: 1,
      nome: 'Half',
      ativo: true,
      dominio: `half-${tenantId}.localhost`,
      developmentVariables: {},
      tokenHash: hashToken(takenToken),
      createdAt: new Date().toISOString(),
      updatedAt: new Date().toISOString(),
    };
    await expect(insertTenant(tenant, takenToken, [])).rejects.toThrow();
    expect(await findTenant(tenantId)).toBeUndefined();
    expect((await getItem(stored.token.key({ tokenHash: hashToken(takenToken) })))?.kind).toBe('client');
  });
});

describe('idempotency', () => {
  const scope = `test:${crypto.randomUUID()}`;
  const call = (key: string, request = 'same request') => ({
    scope,
    key,
    request,
    deadline: Date.now() + 15_000,
    gatewayRequestId: crypto.randomUUID(),
  });

  test('concurrent calls with one key run the work once and share its answer', async () => {
    let runs = 0;
    const key = crypto.randomUUID();
    const answers = await Promise.all(
      Array.from({ length: 5 }, () =>
        withIdempotency(call(key), async () => {
          runs++;
          await new Promise((resolve) => setTimeout(resolve, 200));
          return { status: 201, body: { run: runs } };
        }),
      ),
    );
    expect(runs).toBe(1);
    expect(answers.map((answer) => answer.body)).toEqual(Array(5).fill({ run: 1 }));
  });

  test('the stored answer is encrypted: the secret in it is not in the table', async () => {
    const key = crypto.randomUUID();
    const secret = await newToken('tenant', { clientId: 1, tenantId: 1 });
    await withIdempotency(call(key), async () => ({ status: 201, body: { token: secret } }));
    const item = await getItem(
      stored.idempotency.key({ scope, keyHash: createHash('sha256').update(`key:${key}`).digest('hex') }),
    );
    expect(item?.state).toBe('done');
    expect(JSON.stringify(item)).not.toContain(secret);
    expect(JSON.stringify(item)).not.toContain(key);
    expect(item?.expiresAt).toBeGreaterThan(Date.now() / 1000 + 23 * 3600);
  });

  test('a failure releases the key so that a retry runs again', async () => {
    const key = crypto.randomUUID();
    await expect(
      withIdempotency(call(key), async () => {
        throw new Error('boom');
      }),
    ).rejects.toThrow('boom');
    const retried = await withIdempotency(call(key), async () => ({ status: 201, body: 'second' }));
    expect(retried.body).toBe('second');
  });

  test('a 5xx answer is not stored; a different request with the key is 409', async () => {
    const key = crypto.randomUUID();
    await withIdempotency(call(key), async () => ({ status: 503, body: 'later' }));
    expect((await withIdempotency(call(key), async () => ({ status: 201, body: 'now' }))).body).toBe('now');
    await expect(withIdempotency(call(key, 'another request'), async () => ({ status: 201, body: 'x' }))).rejects.toSatisfy(
      (error) => error instanceof ServiceError && error.status === 409,
    );
  });

  test('an answer stored by the last transaction is replayed, and a later attempt past the deadline resumes from the checkpoint', async () => {
    const key = crypto.randomUUID();
    const soon = { ...call(key), deadline: Date.now() - 1 };
    // The first attempt checkpoints, then stops (as if killed) before its last write.
    await withIdempotency(soon, async (attempt) => {
      const record = attempt.resumable<{ n: number }, { step: number }>((result) => ({ status: 201, body: result }));
      expect(record.resumeFrom).toBeUndefined();
      await transaction()
        .include(record.checkpoint({ step: 1 }))
        .commit();
      throw new Error('stopped');
    }).catch(() => undefined);
    const resumed = await withIdempotency(call(key), async (attempt) => {
      const record = attempt.resumable<{ n: number }, { step: number }>((result) => ({ status: 201, body: result }));
      await transaction()
        .include(record.finish({ n: record.resumeFrom?.step ?? 0 }))
        .commit();
      return { status: 201, body: { n: -1 } };
    });
    // The answer the last transaction stored is what counts, also for this attempt's own replay.
    expect(resumed.body).toEqual({ n: -1 });
    const replayed = await withIdempotency(call(key), async () => ({ status: 201, body: 'never' }));
    expect(replayed.body).toEqual({ n: 1 });
    expect(replayed.headers?.['idempotent-replayed']).toBe('true');
  });

  test('an attempt whose claim was taken over cannot complete: its transaction is refused (409)', async () => {
    const key = crypto.randomUUID();
    let release: () => void = () => undefined;
    const stalled = withIdempotency({ ...call(key), deadline: Date.now() + 50 }, async (attempt) => {
      const record = attempt.resumable<string>((result) => ({ status: 201, body: result }));
      await new Promise<void>((resolve) => {
        release = resolve;
      });
      await transaction().include(record.finish('late')).commit();
      return { status: 201, body: 'late' };
    });
    await new Promise((resolve) => setTimeout(resolve, 100));
    const retry = await withIdempotency(call(key), async () => ({ status: 201, body: 'retry' }));
    expect(retry.body).toBe('retry');
    release();
    await expect(stalled).rejects.toMatchObject({ status: 409, code: 'idempotency_key_in_progress' });
    expect((await withIdempotency(call(key), async () => ({ status: 201, body: 'never' }))).body).toBe('retry');
  });

  test('an answer too large to keep is not kept: a replay says so instead of running again', async () => {
    const key = crypto.randomUUID();
    const large = randomBytes(400 * 1024).toString('base64');
    expect((await withIdempotency(call(key), async () => ({ status: 201, body: large }))).status).toBe(201);
    await expect(withIdempotency(call(key), async () => ({ status: 201, body: 'again' }))).rejects.toMatchObject({
      status: 409,
      code: 'idempotency_answer_not_kept',
    });
  });

  test('keys must be printable ASCII of at most 255 characters', async () => {
    for (const key of ['', 'x'.repeat(256), 'naïve', 'a b']) {
      await expect(withIdempotency(call(key), async () => ({ status: 201, body: {} }))).rejects.toMatchObject({ status: 400 });
    }
  });
});

describe('filtered pages', () => {
  type Row = { pk: string; sk: string; index: number; pass: boolean };
  const partition = `FILTERED#${randomBytes(8).toString('hex')}`;
  const rows = Array.from({ length: maxItemsReadPerFilteredPage + 100 }, (_, index) => ({
    pk: partition,
    sk: `ROW#${String(index).padStart(5, '0')}`,
    index,
    pass: index % 100 === 0,
  }));
  /** The items each Query of `work` read, in order. */
  async function readsOf<T>(work: () => Promise<T>): Promise<{ result: T; reads: number[] }> {
    const reads: number[] = [];
    const name = `countFilteredReads${randomBytes(4).toString('hex')}`;
    db().middlewareStack.add(
      (next) => async (args) => {
        const result = await next(args);
        const items = (result.output as { Items?: unknown[] }).Items;
        if (items) reads.push(items.length);
        return result;
      },
      { step: 'initialize', name },
    );
    try {
      return { result: await work(), reads };
    } finally {
      db().middlewareStack.remove(name);
    }
  }
  const page = (limit: number, keep: (row: Row) => boolean, cursor?: string) =>
    queryFilteredPage<Row>({ partition, prefix: 'ROW#', limit, cursor, keep });

  test('read in proportion to their limit, reading on while few items pass, never more than 1,000 items', async () => {
    await putAll(rows);
    // Every item passes: a page of 2 reads one batch of 50, not the 1,000 a page may read.
    const all = await readsOf(() => page(2, () => true));
    expect(all.result.items.map((row) => row.index)).toEqual([0, 1]);
    expect(all.reads).toEqual([50]);
    // One in a hundred passes: the batches double until the page is full.
    const few = await readsOf(() => page(5, (row) => row.pass));
    expect(few.result.items.map((row) => row.index)).toEqual([0, 100, 200, 300, 400]);
    expect(few.reads).toEqual([50, 100, 200, 400]);
    // None passes: it stops at 1,000 items read, with an empty page and a cursor that goes on after them.
    const none = await readsOf(() => page(5, () => false));
    expect(none.result.items).toEqual([]);
    expect(none.reads.reduce((sum, read) => sum + read, 0)).toBe(maxItemsReadPerFilteredPage);
    const next = await page(5, (row) => row.pass, none.result.nextCursor ?? undefined);
    expect(next.items.map((row) => row.index)).toEqual([1000]);
    expect(next.nextCursor).toBeNull();
  });
});
