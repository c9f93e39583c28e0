// The KeyValueStore data plane signs with SigV4A (its endpoint is global): this registers the signer.
import '@aws-sdk/signature-v4a';
import {
  CloudFrontKeyValueStoreClient,
  DescribeKeyValueStoreCommand,
  ListKeysCommand,
  UpdateKeysCommand,
} from '@aws-sdk/client-cloudfront-keyvaluestore';
import { type TokenKeyring, tokenKeyringJson, tokenKeyStore } from './token-keys.ts';

/** The keys of the store this module owns: the token keys (`k<id>`) and `current`. */
const ownedKey = /^(k[1-9][0-9]{0,5}|current)$/;
/** UpdateKeys takes at most this many puts and deletes together. */
const maxChangesPerUpdate = 50;

/** What `writeTokenKeyringToKeyValueStore` changed (key names only: values are secrets). */
export interface KeyValueStoreSync {
  put: string[];
  deleted: string[];
}

type KvsClient = Pick<CloudFrontKeyValueStoreClient, 'send'>;

/**
 * Writes the token keyring into the CloudFront KeyValueStore `kvsArn` that the edge function reads
 * (functions/edge/viewer-request.js): `k<id>` → the key's secret text for every key, and `current`.
 * Keys of that form the keyring no longer has are deleted; any other key of the store is left alone;
 * a store already up to date is not written. Each change names the store's ETag (read with
 * DescribeKeyValueStore, then the one each update returns), so a concurrent writer fails it rather
 * than being overwritten unseen.
 *
 * Called by `npm run admin -- token-keys rotate` before the secret is written (the edge knows a key
 * before any function mints with it), and by the stack's custom resource on deployment.
 */
export async function writeTokenKeyringToKeyValueStore(
  kvsArn: string,
  keyring: TokenKeyring,
  client: KvsClient = new CloudFrontKeyValueStoreClient({}),
): Promise<KeyValueStoreSync> {
  const wanted = tokenKeyringJson(keyring);
  const present = new Map<string, string>();
  let nextToken: string | undefined;
  do {
    const page = await client.send(new ListKeysCommand({ KvsARN: kvsArn, NextToken: nextToken, MaxResults: 50 }));
    for (const { Key: key, Value: value } of page.Items ?? [])
      if (key !== undefined && ownedKey.test(key)) present.set(key, value ?? '');
    nextToken = page.NextToken;
  } while (nextToken);
  const puts = Object.entries(wanted)
    .filter(([key, value]) => present.get(key) !== value)
    .map(([Key, Value]) => ({ Key, Value }));
  const deletes = [...present.keys()].filter((key) => !Object.hasOwn(wanted, key)).map((Key) => ({ Key }));
  const changes = [...puts.map((put) => ({ put })), ...deletes.map((remove) => ({ remove }))];
  if (changes.length > 0) {
    let etag = (await client.send(new DescribeKeyValueStoreCommand({ KvsARN: kvsArn }))).ETag;
    // The puts come first: a batch boundary never leaves `current` naming a key deleted or not yet put.
    for (let start = 0; start < changes.length; start += maxChangesPerUpdate) {
      const batch = changes.slice(start, start + maxChangesPerUpdate);
      const answer = await client.send(
        new UpdateKeysCommand({
          KvsARN: kvsArn,
          IfMatch: etag,
          Puts: batch.flatMap((change) => ('put' in change ? [change.put] : [])),
          Deletes: batch.flatMap((change) => ('remove' in change ? [change.remove] : [])),
        }),
      );
      etag = answer.ETag;
    }
  }
  return { put: puts.map((put) => put.Key), deleted: deletes.map((remove) => remove.Key) };
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
