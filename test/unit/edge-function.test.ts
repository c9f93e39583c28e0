/**
 * The edge's viewer-request function (functions/edge/viewer-request.js), run as CloudFront gets it
 * (local/edge-function.ts): it refuses exactly what the handler refuses before any lookup, with the
 * handler's own 401, and passes everything else untouched.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2, Context } from 'aws-lambda';
import fc from 'fast-check';
import { beforeEach, describe, expect, onTestFinished, test } from 'vitest';
import { requestIdOf } from '#functions/core/api/request-id.ts';
import { screenAuthorization, tokenMac } from '#functions/core/auth/tokens.ts';
import { errorBody } from '#functions/core/errors.ts';
import {
  anonymousPathsOf,
  type EdgeSettings,
  maxEdgeFunctionBytes,
  viewerRequestCode,
} from '#functions/edge/viewer-request-code.ts';
import { handler as whoami } from '#functions/http/whoami.ts';
import { routes } from '#functions/routes.ts';
import { type EdgeEvent, type EdgeHandler, type EdgeResponse, keyValueStoreOf, loadViewerRequest } from '#local/edge-function.ts';

const secrets = new Map([
  ['1', 'first-secret-text-of-the-token-keyring-0123456789abcdefghijklmn'],
  ['2', 'second-secret-text-of-the-token-keyring-0123456789abcdefghijklm'],
]);
/** The KeyValueStore as token-keys-kvs.ts fills it. */
const store = keyValueStoreOf({ current: '2', ...Object.fromEntries([...secrets].map(([id, secret]) => [`k${id}`, secret])) });
const anonymousPaths = anonymousPathsOf(routes);
const settings = (acceptUnsigned: boolean): EdgeSettings => ({ anonymousPaths, acceptUnsigned });
const edges: Record<'accept' | 'refuse', EdgeHandler> = {
  accept: loadViewerRequest(settings(true), store),
  refuse: loadViewerRequest(settings(false), store),
};

const event = (uri: string, authorization?: string | string[]): EdgeEvent => ({
  context: { requestId: 'cf-request-1' },
  request: {
    method: 'GET',
    uri,
    headers:
      authorization === undefined
        ? {}
        : typeof authorization === 'string'
          ? { authorization: { value: authorization } }
          : {
              authorization: {
                value: authorization[0] as string,
                multiValue: authorization.map((value) => ({ value })),
              },
            },
  },
});
const isResponse = (answer: Awaited<ReturnType<EdgeHandler>>): answer is EdgeResponse => 'statusCode' in answer;

const base64url = fc.uint8Array({ minLength: 32, maxLength: 32 }).map((bytes) => Buffer.from(bytes).toString('base64url'));
const id = fc.integer({ min: 1, max: 999_999_999_999_999 });
const prefixOf = { client: 'cli', tenant: 'ten', agent: 'agt' } as const;
const arity = { client: 1, tenant: 2, agent: 3 } as const;
const kind = fc.constantFrom('client', 'tenant', 'agent');
/** `<prefix>_<keyId>.<owner>.<random>` and its MAC under `secret`. */
const sign = (head: string, random: string, secret: string) => `${head}.${random}.${tokenMac(`${head}.${random}`, secret)}`;

const validSigned = fc
  .record({ kind, keyId: fc.constantFrom('1', '2'), ids: fc.array(id, { minLength: 3, maxLength: 3 }), random: base64url })
  .map(({ kind, keyId, ids, random }) =>
    sign(`${prefixOf[kind]}_${keyId}.${ids.slice(0, arity[kind]).join('-')}`, random, secrets.get(keyId) as string),
  );
const base64urlChar = fc.constantFrom(...'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_');
/** A valid token with one character changed (most often in the MAC, also anywhere else). */
const forgedByOne = fc
  .record({ token: validSigned, at: fc.nat(), char: fc.oneof(base64urlChar, fc.constantFrom('.', '=', '0', '1', '-')) })
  .map(({ token, at, char }) => {
    const index = at % 3 === 0 ? at % token.length : token.length - 1 - (at % 43);
    return `${token.slice(0, index)}${char}${token.slice(index + 1)}`;
  });
const wrongKeyId = fc
  .record({ keyId: fc.integer({ min: 3, max: 999_999 }), ids: fc.array(id, { minLength: 1, maxLength: 1 }), random: base64url })
  .map(({ keyId, ids, random }) => sign(`cli_${keyId}.${ids.join('-')}`, random, secrets.get('1') as string));
const malformedOwner = fc
  .record({
    owner: fc.constantFrom('0', '01', '1234567890123456', '1-', '-1', '1--2', 'a', '1.2', '', '1_2'),
    random: base64url,
  })
  .map(({ owner, random }) => sign(`ten_1.${owner}`, random, secrets.get('1') as string));
const wrongArity = fc
  .record({ kind, count: fc.integer({ min: 1, max: 3 }), ids: fc.array(id, { minLength: 3, maxLength: 3 }), random: base64url })
  .filter(({ kind, count }) => count !== arity[kind])
  .map(({ kind, count, ids, random }) =>
    sign(`${prefixOf[kind]}_1.${ids.slice(0, count).join('-')}`, random, secrets.get('1') as string),
  );
const unsigned = fc.oneof(
  base64url.map((random) => `cli_${random}`),
  base64url.map((random) => `ten_${random}`),
  fc.constant('cli_local_demo_token_0123456789'),
  fc.string({ unit: fc.integer({ min: 0x21, max: 0x7e }).map((code) => String.fromCharCode(code)), minLength: 1, maxLength: 80 }),
);
const token = fc.oneof(validSigned, forgedByOne, wrongKeyId, malformedOwner, wrongArity, unsigned);

const scheme = fc.constantFrom('Bearer', 'bearer', 'BEARER', 'bEaReR', 'Basic', 'Token', 'Bearerx', 'Digest');
const spaces = fc.constantFrom(' ', '  ', '   ', '\t', ' \t', '', '\u00a0');
const header = fc.oneof(
  { weight: 6, arbitrary: fc.tuple(scheme, spaces, token).map(([s, gap, t]) => `${s}${gap}${t}`) },
  {
    weight: 1,
    arbitrary: fc
      .tuple(fc.constantFrom(' ', '\t', ''), token, fc.constantFrom(' ', '\t', '\n', ''))
      .map(([before, t, after]) => `${before}Bearer ${t}${after}`),
  },
  { weight: 1, arbitrary: fc.string({ maxLength: 120 }) },
  { weight: 1, arbitrary: fc.string({ maxLength: 120 }).map((text) => `Bearer ${text}`) },
  { weight: 1, arbitrary: fc.constant(undefined) },
);

/** The handler's decision before any lookup, as the edge's answer would show it. */
async function handlerDecision(authorization: string | undefined, acceptUnsigned: boolean) {
  const screening = await screenAuthorization(authorization, { acceptUnsigned, macKey: async (keyId) => secrets.get(keyId) });
  if (!('refused' in screening)) return 'pass';
  return screening.refused === 'missing' ? 'Missing bearer token' : 'Invalid or expired token';
}

async function edgeDecision(authorization: string | undefined, acceptUnsigned: boolean) {
  const answer = await edges[acceptUnsigned ? 'accept' : 'refuse'](event('/tenants/7', authorization));
  if (!isResponse(answer)) return 'pass';
  expect(answer.statusCode).toBe(401);
  return (JSON.parse(answer.body.data) as { message: string }).message;
}

describe('the code CloudFront gets', () => {
  test("the anonymous paths are the route table's rows without auth: exact paths, prefixes up to a parameter", () => {
    expect(anonymousPaths).toEqual([
      '/.well-known/jwks.json',
      '/auth/api/',
      '/auth/session',
      '/docs',
      '/docs/',
      '/health',
      '/openapi.json',
    ]);
  });

  test('is under the 10 KB quota, with the settings as one JSON literal and no placeholder', () => {
    const code = viewerRequestCode(settings(false));
    expect(Buffer.byteLength(code, 'utf8')).toBeLessThan(maxEdgeFunctionBytes);
    expect(code).not.toContain('__EDGE_SETTINGS__');
    expect(code).toContain(`var settings = ${JSON.stringify(settings(false))};`);
    expect(code).toContain("import crypto from 'crypto';");
    expect(code).toContain("import cf from 'cloudfront';");
    expect(code).not.toMatch(/^\s*\/\//m);
    expect(code).not.toContain('docs.aws.amazon.com');
  });

  test('settings with characters that mean something in a replacement string stay as given', () => {
    const odd = { anonymousPaths: ["/$&$'$`/"], acceptUnsigned: true };
    expect(viewerRequestCode(odd)).toContain(`var settings = ${JSON.stringify(odd)};`);
  });
});

describe('what the edge answers', () => {
  test('an anonymous path passes untouched, whatever its header', async () => {
    for (const uri of [
      '/health',
      '/docs',
      '/docs/swagger-ui.css',
      '/auth/api/abc',
      '/auth/session',
      '/.well-known/jwks.json',
      '/openapi.json',
    ]) {
      for (const authorization of [undefined, 'Basic abc', 'Bearer cli_1.1.forged.forged']) {
        const sent = event(uri, authorization);
        expect(await edges.refuse(sent), uri).toBe(sent.request);
      }
    }
    for (const uri of ['/healthz', '/docsx', '/doc', '/auth', '/auth/api', '/.well-known/other', '/tenants']) {
      expect(isResponse(await edges.accept(event(uri))), uri).toBe(true);
    }
  });

  test('a valid signed token passes untouched, the request as it came', async () => {
    const valid = fc.sample(validSigned, { numRuns: 20, seed: 7 });
    for (const signed of valid) {
      const sent = event('/tenants', `Bearer ${signed}`);
      expect(await edges.refuse(sent)).toBe(sent.request);
    }
  });

  test("its 401 is the handler's: same status, envelope, challenge and headers, the request id CloudFront's", async () => {
    const scratch = mkdtempSync(join(tmpdir(), 'edge-keys-'));
    onTestFinished(() => rmSync(scratch, { recursive: true, force: true }));
    const keysFile = join(scratch, 'token-keys.json');
    writeFileSync(keysFile, JSON.stringify({ current: '1', k1: secrets.get('1') }));
    process.env.TOKEN_KEYS_FILE = keysFile;
    // As the edge with acceptUnsigned false: no header here reaches a lookup (unit tests have no table).
    process.env.UNSIGNED_TOKENS = 'refuse';
    const forged = `${fc.sample(validSigned, { numRuns: 1, seed: 3 })[0]?.slice(0, -2)}xx`;
    for (const authorization of [undefined, 'Basic abc', `Bearer ${forged}`, 'Bearer cli_1.1.short.short']) {
      const fromEdge = await edges.refuse(event('/whoami', authorization));
      if (!isResponse(fromEdge)) throw new Error(`The edge passed ${authorization}`);
      const fromHandler = (await whoami(apiEvent(authorization), lambdaContext)) as APIGatewayProxyStructuredResultV2;
      expect(fromEdge.statusCode).toBe(fromHandler.statusCode);
      const body = JSON.parse(fromEdge.body.data) as { message: string };
      expect(fromEdge.body.data).toBe(JSON.stringify(errorBody('unauthorized', body.message, 'cf-request-1')));
      expect({ ...JSON.parse(fromHandler.body as string), requestId: 'cf-request-1' }).toEqual(JSON.parse(fromEdge.body.data));
      expect(Object.fromEntries(Object.entries(fromEdge.headers).map(([name, { value }]) => [name, value]))).toEqual({
        ...fromHandler.headers,
        'x-request-id': 'cf-request-1',
      });
    }
  });

  test("its 401's request id is the handler's choice: the caller's X-Request-Id when valid, else CloudFront's", async () => {
    const refused = async (value: string | string[]) => {
      const sent = event('/whoami');
      const values = typeof value === 'string' ? [value] : value;
      sent.request.headers['x-request-id'] = { value: values[0] as string, multiValue: values.map((each) => ({ value: each })) };
      const answer = await edges.refuse(sent);
      if (!isResponse(answer)) throw new Error('The edge passed a request without a token');
      expect(JSON.parse(answer.body.data).requestId).toBe(answer.headers['x-request-id']?.value);
      return answer.headers['x-request-id']?.value;
    };
    // The handler's rule, on any value (API Gateway joins a repeated field with commas, as the edge reads it).
    const value = fc.oneof(
      fc.string({ unit: 'binary-ascii', maxLength: 140 }),
      fc.string({ unit: fc.integer({ min: 0x20, max: 0x7f }).map((code) => String.fromCharCode(code)), maxLength: 140 }),
      fc.string({ maxLength: 20 }).map((text) => `caller-${text}`),
    );
    await fc.assert(
      fc.asyncProperty(fc.oneof(value, fc.array(value, { minLength: 2, maxLength: 3 })), async (sent) => {
        const joined = typeof sent === 'string' ? sent : sent.join(',');
        const handlerChoice = requestIdOf({
          headers: { 'x-request-id': joined },
          requestContext: { requestId: 'cf-request-1' },
        } as never);
        expect(await refused(sent)).toBe(handlerChoice);
      }),
      { numRuns: 300 },
    );
    expect(await refused('x'.repeat(128))).toBe('x'.repeat(128));
    expect(await refused('x'.repeat(129))).toBe('cf-request-1');
  });

  test('a repeated Authorization field is read joined, as API Gateway joins it for the handler', async () => {
    const valid = fc.sample(validSigned, { numRuns: 1, seed: 5 })[0] as string;
    const answer = await edges.accept(event('/tenants', [`Bearer ${valid}`, `Bearer ${valid}`]));
    expect(isResponse(answer) && JSON.parse(answer.body.data).message).toBe('Missing bearer token');
    expect(await handlerDecision(`Bearer ${valid},Bearer ${valid}`, true)).toBe('Missing bearer token');
  });

  test('a key missing from the KeyValueStore refuses the tokens it signed (the edge never guesses)', async () => {
    const valid = fc.sample(validSigned, { numRuns: 30, seed: 11 }).find((candidate) => candidate.includes('_2.')) as string;
    const withoutTwo = loadViewerRequest(settings(true), keyValueStoreOf({ current: '1', k1: secrets.get('1') as string }));
    expect(isResponse(await withoutTwo(event('/tenants', `Bearer ${valid}`)))).toBe(true);
  });
});

test.each([true, false])(
  'the edge and the handler reach the same decision for any Authorization header (acceptUnsigned %s)',
  async (acceptUnsigned) => {
    await fc.assert(
      fc.asyncProperty(header, async (authorization) => {
        expect(await edgeDecision(authorization, acceptUnsigned)).toBe(await handlerDecision(authorization, acceptUnsigned));
      }),
      { numRuns: 2000 },
    );
  },
);

test('the generators reach every outcome', async () => {
  const outcomes = new Set<string>();
  for (const authorization of fc.sample(header, { numRuns: 2000, seed: 1 })) {
    outcomes.add(await handlerDecision(authorization, false));
  }
  expect(outcomes).toEqual(new Set(['pass', 'Missing bearer token', 'Invalid or expired token']));
});

const apiEvent = (authorization: string | undefined): APIGatewayProxyEventV2 =>
  ({
    version: '2.0',
    routeKey: 'GET /whoami',
    rawPath: '/whoami',
    rawQueryString: '',
    headers: authorization === undefined ? {} : { authorization },
    isBase64Encoded: false,
    requestContext: { requestId: 'api-request-1', http: { method: 'GET', path: '/whoami' } },
  }) as unknown as APIGatewayProxyEventV2;
const lambdaContext = { awsRequestId: 'lambda-request', functionName: 'whoami', getRemainingTimeInMillis: () => 1000 } as Context;

beforeEach(() => {
  delete process.env.UNSIGNED_TOKENS;
});
