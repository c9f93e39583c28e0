// The KeyValueStore data plane signs with SigV4A (its endpoint is global): this registers the signer.
import '@aws-sdk/signature-v4a';
import {
  CloudFrontKeyValueStoreClient,
  DescribeKeyValueStoreCommand,
  ListKeysCommand,
  UpdateKeysCommand,
} from '@aws-sdk/client-cloudfront-keyvaluestore';
import { type TokenKeyring, tokenKeyName, tokenKeyStore } from './token-keys.ts';

/** UpdateKeys takes at most this many puts together. */
const maxPutsPerUpdate = 50;

/** What `writeTokenKeyringToKeyValueStore` wrote (key names only: values are secrets). */
export interface KeyValueStoreSync {
  put: string[];
}

type KvsClient = Pick<CloudFrontKeyValueStoreClient, 'send'>;

/**
 * Writes the token keyring into the CloudFront KeyValueStore `kvsArn` that the edge function reads
 * (functions/edge/viewer-request.js): `k<id>` → the key's secret text, for every key it lacks or holds
 * otherwise. Nothing is deleted: a keyring only grows (a rotation adds a key), so a key the keyring
 * given here lacks is one a concurrent rotation has just added, and must stay. A store already up to
 * date is not written. The store's ETag is read before its keys, and each update names the last one,
 * so a write that lands meanwhile fails this one rather than being overwritten unseen.
 *
 * Called by `npm run admin -- token-keys rotate` before the secret is written (the edge knows a key
 * before any function mints with it), by `token-keys sync`, and by the stack's custom resource on deployment.
 */
export async function writeTokenKeyringToKeyValueStore(
  kvsArn: string,
  keyring: TokenKeyring,
  client: KvsClient = new CloudFrontKeyValueStoreClient({}),
): Promise<KeyValueStoreSync> {
  let etag = (await client.send(new DescribeKeyValueStoreCommand({ KvsARN: kvsArn }))).ETag;
  const present = new Map<string, string>();
  let nextToken: string | undefined;
  do {
    const page = await client.send(new ListKeysCommand({ KvsARN: kvsArn, NextToken: nextToken, MaxResults: 50 }));
    for (const { Key: key, Value: value } of page.Items ?? []) if (key !== undefined) present.set(key, value ?? '');
    nextToken = page.NextToken;
  } while (nextToken);
  // The edge reads only the keys (k<id>); which one mints is the functions' business (the secret's `current`).
  const puts = Object.entries(keyring.keys)
    .map(([id, secret]) => ({ Key: tokenKeyName(id), Value: secret }))
    .filter(({ Key, Value }) => present.get(Key) !== Value);
  for (let start = 0; start < puts.length; start += maxPutsPerUpdate) {
    const answer = await client.send(
      new UpdateKeysCommand({ KvsARN: kvsArn, IfMatch: etag, Puts: puts.slice(start, start + maxPutsPerUpdate) }),
    );
    etag = answer.ETag;
  }
  return { put: puts.map((put) => put.Key) };
}

/**
 * Reads the token keyring where it lives (TOKEN_KEYS_SECRET_ARN on AWS) and writes it into the
 * KeyValueStore `kvsArn` (default TOKEN_KEYS_KVS_ARN): what a deployment runs so that the edge has
 * the stack's first key, and what repairs a store that missed a rotation.
 */
export async function syncTokenKeysToKeyValueStore(
  kvsArn = process.env.TOKEN_KEYS_KVS_ARN,
  client?: KvsClient,
): Promise<KeyValueStoreSync> {
  if (!kvsArn) throw new Error('Missing TOKEN_KEYS_KVS_ARN: the KeyValueStore of the edge function');
  return writeTokenKeyringToKeyValueStore(kvsArn, await tokenKeyStore().read(), client);
}
