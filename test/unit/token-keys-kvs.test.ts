/**
 * The token keyring written into the edge's KeyValueStore: the requests the writer sends, against a
 * store kept in memory that checks the ETag as CloudFront's does.
 */
import {
  DescribeKeyValueStoreCommand,
  ListKeysCommand,
  type ListKeysCommandInput,
  UpdateKeysCommand,
  type UpdateKeysCommandInput,
} from '@aws-sdk/client-cloudfront-keyvaluestore';
import { describe, expect, test } from 'vitest';
import { writeTokenKeyringToKeyValueStore } from '#functions/core/auth/token-keys-kvs.ts';

const arn = 'arn:aws:cloudfront::123456789012:key-value-store/example';

/** A store of `entries`, answering the three commands the writer sends, and counting updates. */
function fakeStore(entries: Record<string, string>) {
  const items = new Map(Object.entries(entries));
  let version = 1;
  const sent: string[] = [];
  const client = {
    send: async (command: unknown) => {
      if (command instanceof ListKeysCommand) {
        sent.push('ListKeys');
        const input = command.input as ListKeysCommandInput;
        expect(input.KvsARN).toBe(arn);
        const all = [...items].sort(([a], [b]) => a.localeCompare(b));
        const start = Number(input.NextToken ?? 0);
        const page = all.slice(start, start + 2); // Small pages: the writer must follow NextToken.
        return {
          Items: page.map(([Key, Value]) => ({ Key, Value })),
          NextToken: start + 2 < all.length ? String(start + 2) : undefined,
        };
      }
      if (command instanceof DescribeKeyValueStoreCommand) {
        sent.push('Describe');
        return { ETag: `etag-${version}` };
      }
      if (command instanceof UpdateKeysCommand) {
        sent.push('UpdateKeys');
        const input = command.input as UpdateKeysCommandInput;
        if (input.IfMatch !== `etag-${version}`) throw new Error('ConflictException: stale ETag');
        for (const { Key, Value } of input.Puts ?? []) items.set(Key as string, Value as string);
        for (const { Key } of input.Deletes ?? []) items.delete(Key as string);
        version++;
        return { ETag: `etag-${version}` };
      }
      throw new Error(`Unexpected command ${String(command)}`);
    },
  };
  return { client: client as never, items, sent };
}

describe('writing the token keyring into the KeyValueStore', () => {
  test('puts every key it lacks or holds otherwise, and deletes nothing: neither a key the keyring lacks, nor any other', async () => {
    // k3: a key a concurrent rotation has just added, which the keyring read here does not have yet.
    const store = fakeStore({ k1: 'old-one', k3: 'added meanwhile', unrelated: 'kept' });
    const sync = await writeTokenKeyringToKeyValueStore(arn, { current: '2', keys: { '1': 'one', '2': 'two' } }, store.client);
    expect(Object.fromEntries(store.items)).toEqual({ k1: 'one', k2: 'two', k3: 'added meanwhile', unrelated: 'kept' });
    expect(sync).toEqual({ put: ['k1', 'k2'] });
    expect(store.sent.filter((name) => name === 'UpdateKeys')).toHaveLength(1);
  });

  test('reads the ETag before the keys, so a write landing between the two fails the update instead of being overwritten', async () => {
    const store = fakeStore({ k1: 'one' });
    await writeTokenKeyringToKeyValueStore(arn, { current: '2', keys: { '1': 'one', '2': 'two' } }, store.client);
    expect(store.sent.slice(0, 2)).toEqual(['Describe', 'ListKeys']);
    const racing = fakeStore({ k1: 'one' });
    const client = {
      send: async (command: unknown) => {
        const answer = await (racing.client as { send: (command: unknown) => Promise<unknown> }).send(command);
        // Another writer updates the store right after this one listed it.
        if (command instanceof ListKeysCommand)
          await (racing.client as { send: (command: unknown) => Promise<unknown> }).send(
            new UpdateKeysCommand({ KvsARN: arn, IfMatch: 'etag-1', Puts: [{ Key: 'k2', Value: 'theirs' }] }),
          );
        return answer;
      },
    };
    await expect(
      writeTokenKeyringToKeyValueStore(arn, { current: '2', keys: { '1': 'one', '2': 'mine' } }, client as never),
    ).rejects.toThrow(/stale ETag/);
    expect(racing.items.get('k2')).toBe('theirs');
  });

  test('a store already up to date is not written', async () => {
    const store = fakeStore({ k1: 'one', k2: 'two' });
    const sync = await writeTokenKeyringToKeyValueStore(arn, { current: '2', keys: { '1': 'one', '2': 'two' } }, store.client);
    expect(sync).toEqual({ put: [] });
    expect(store.sent).not.toContain('UpdateKeys');
  });

  test('more keys than one update takes go in several, each naming the ETag the previous one returned', async () => {
    const keys = Object.fromEntries(Array.from({ length: 70 }, (_, index) => [String(index + 1), `secret-${index + 1}`]));
    const store = fakeStore({});
    await writeTokenKeyringToKeyValueStore(arn, { current: '70', keys }, store.client);
    expect(store.items.size).toBe(70);
    expect(store.items.get('k70')).toBe('secret-70');
    expect(store.sent.filter((name) => name === 'UpdateKeys')).toHaveLength(2);
  });
});
