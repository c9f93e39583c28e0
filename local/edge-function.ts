import { createHmac } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { parseTokenKeyring, tokenKeyName } from '#functions/core/auth/token-keys.ts';
import { type EdgeSettings, viewerRequestCode } from '#functions/edge/viewer-request-code.ts';

/** A header of a CloudFront Functions event: lowercase name → value (and the values of a repeated field). */
export type EdgeHeaders = Record<string, { value: string; multiValue?: Array<{ value: string }> }>;

/** The part of a viewer-request event the function reads. */
export interface EdgeEvent {
  context: { requestId: string };
  request: { method: string; uri: string; headers: EdgeHeaders; querystring?: Record<string, unknown> };
}

/** The response the function generates instead of passing the request on. */
export interface EdgeResponse {
  statusCode: number;
  statusDescription: string;
  headers: EdgeHeaders;
  body: { encoding: 'text'; data: string };
}

export type EdgeHandler = (event: EdgeEvent) => Promise<EdgeEvent['request'] | EdgeResponse>;

/** What the function reads of its KeyValueStore: `get` rejects a key the store does not have, as CloudFront's does. */
export interface EdgeKeyValueStore {
  get(key: string): Promise<string>;
}

/** A KeyValueStore of fixed entries. */
export function keyValueStoreOf(entries: ReadonlyMap<string, string> | Record<string, string>): EdgeKeyValueStore {
  const map = entries instanceof Map ? entries : new Map(Object.entries(entries));
  return {
    get: async (key) => {
      if (!map.has(key)) throw new Error(`KeyNotFound: ${key}`);
      return map.get(key) as string;
    },
  };
}

/** The KeyValueStore the token keyring file (TOKEN_KEYS_FILE) would fill, read afresh on every `get`. */
export function keyValueStoreOfKeyringFile(file = process.env.TOKEN_KEYS_FILE): EdgeKeyValueStore {
  if (!file) throw new Error('Missing TOKEN_KEYS_FILE');
  return {
    get: async (key) => {
      // As the stack's sync writes the store: `k<id>` → each key's secret text, nothing else.
      const { keys } = parseTokenKeyring(JSON.parse(readFileSync(file, 'utf8')));
      return keyValueStoreOf(Object.fromEntries(Object.entries(keys).map(([id, secret]) => [tokenKeyName(id), secret]))).get(key);
    },
  };
}

/** The runtime's `crypto` module as the function uses it: HMAC only (CloudFront's behaves as Node's). */
const cryptoShim = { createHmac: (algorithm: string, key: string) => createHmac(algorithm, key) };

/**
 * The viewer-request function as CloudFront runs it, in this process: the code `viewerRequestCode`
 * gives CloudFront, its two imports replaced by shims (node:crypto for `crypto`, `kvs` for
 * `cf.kvs()`), evaluated in strict mode as the runtime does. Returns its `handler`.
 */
export function loadViewerRequest(settings: EdgeSettings, kvs: EdgeKeyValueStore): EdgeHandler {
  const imports = {
    "import crypto from 'crypto';": 'var crypto = shims.crypto;',
    "import cf from 'cloudfront';": 'var cf = shims.cf;',
  };
  let code = viewerRequestCode(settings);
  for (const [line, shim] of Object.entries(imports)) {
    if (code.split(line).length !== 2) throw new Error(`The edge function must hold the line ${line} once`);
    code = code.replace(line, shim);
  }
  const evaluate = new Function('shims', `'use strict';\n${code}\nreturn handler;`) as (shims: unknown) => EdgeHandler;
  return evaluate({ crypto: cryptoShim, cf: { kvs: () => kvs } });
}
