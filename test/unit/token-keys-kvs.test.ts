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
  test('puts every key and current, deletes the keys the keyring dropped, leaves other keys alone', async () => {
    const store = fakeStore({ current: '1', k1: 'old-one', k3: 'dropped', unrelated: 'kept' });
    const sync = await writeTokenKeyringToKeyValueStore(arn, { current: '2', keys: { '1': 'one', '2': 'two' } }, store.client);
    expect(Object.fromEntries(store.items)).toEqual({ current: '2', k1: 'one', k2: 'two', unrelated: 'kept' });
    expect(sync).toEqual({ put: ['current', 'k1', 'k2'], deleted: ['k3'] });
    expect(store.sent.filter((name) => name === 'UpdateKeys')).toHaveLength(1);
  });

  test('a store already up to date is not written', async () => {
    const store = fakeStore({ current: '2', k1: 'one', k2: 'two' });
    const sync = await writeTokenKeyringToKeyValueStore(arn, { current: '2', keys: { '1': 'one', '2': 'two' } }, store.client);
    expect(sync).toEqual({ put: [], deleted: [] });
    expect(store.sent).not.toContain('UpdateKeys');
    expect(store.sent).not.toContain('Describe');
  });

  test('more changes than one update takes go in several, each naming the ETag the previous one returned', async () => {
    const keys = Object.fromEntries(Array.from({ length: 70 }, (_, index) => [String(index + 1), `secret-${index + 1}`]));
    const store = fakeStore({});
    await writeTokenKeyringToKeyValueStore(arn, { current: '70', keys }, store.client);
    expect(store.items.size).toBe(71);
    expect(store.items.get('current')).toBe('70');
    expect(store.sent.filter((name) => name === 'UpdateKeys')).toHaveLength(2);
  });
});
