/**
 * The keyrings' secret store (functions/core/keyrings/json-secret.ts) speaks Secrets Manager's JSON protocol
 * itself, signed by store/signed-fetch.ts, so that the route functions bundle no SDK client: its requests are held to what
 * the SDK's SecretsManagerClient sends. A local HTTP server plays Secrets Manager for both (the client's
 * `endpoint`, the store's SECRETS_MANAGER_ENDPOINT), records each request and answers as the service does.
 */
import { once } from 'node:events';
import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import {
  GetSecretValueCommand,
  PutSecretValueCommand,
  ResourceNotFoundException,
  SecretsManagerClient,
} from '@aws-sdk/client-secrets-manager';
import { afterAll, beforeAll, beforeEach, expect, test } from 'vitest';
import { jsonSecretStore, SecretsManagerError } from '#functions/core/keyrings/json-secret.ts';

interface Recorded {
  method: string | undefined;
  path: string | undefined;
  headers: IncomingHttpHeaders;
  body: Record<string, unknown>;
}

const requests: Recorded[] = [];
/** Each secret's current text, as the server keeps it. */
const secrets = new Map<string, string>();
/** How many of the next requests are answered 500, as a passing fault of the service. */
let faultsLeft = 0;
/** What Secrets Manager's error message says; no error of ours may quote it. */
const errorMessage = 'Secrets Manager can’t find the specified secret (MESSAGE-TEXT).';

const server = createServer((request, response) => {
  let text = '';
  request.on('data', (chunk) => {
    text += chunk;
  });
  request.on('end', () => {
    const body = JSON.parse(text) as Record<string, unknown>;
    requests.push({ method: request.method, path: request.url, headers: request.headers, body });
    const answer = (status: number, json: Record<string, unknown>) => {
      response.writeHead(status, { 'Content-Type': 'application/x-amz-json-1.1' });
      response.end(JSON.stringify(json));
    };
    const secretId = String(body.SecretId);
    if (faultsLeft > 0) {
      faultsLeft -= 1;
      answer(500, { __type: 'InternalServiceError', message: 'An error occurred on the server side.' });
    } else if (secretId.includes('missing')) {
      // The service may name the type with its namespace: the same error.
      const type = secretId.includes('namespaced')
        ? 'com.amazonaws.secretsmanager#ResourceNotFoundException'
        : 'ResourceNotFoundException';
      answer(400, { __type: type, message: errorMessage });
    } else if (request.headers['x-amz-target'] === 'secretsmanager.GetSecretValue') {
      const value = secrets.get(secretId);
      answer(200, {
        ARN: secretId,
        Name: 'TokenKeys',
        VersionId: '00000000-0000-4000-8000-000000000000',
        VersionStages: ['AWSCURRENT'],
        CreatedDate: 1_700_000_000,
        ...(value === undefined ? {} : { SecretString: value }),
      });
    } else if (request.headers['x-amz-target'] === 'secretsmanager.PutSecretValue') {
      secrets.set(secretId, String(body.SecretString));
      answer(200, { ARN: secretId, Name: 'TokenKeys', VersionId: body.ClientRequestToken, VersionStages: ['AWSCURRENT'] });
    } else {
      answer(400, { __type: 'UnknownOperationException' });
    }
  });
});

const credentials = {
  accessKeyId: 'AKIDPROTOCOLTEST',
  secretAccessKey: 'protocol-test-secret',
  sessionToken: 'protocol-test-session',
};
const arn = (name: string) => `arn:aws:secretsmanager:eu-west-1:123456789012:secret:${name}-AbCdEf`;
const location = { secretArnVariable: 'PROTOCOL_TEST_SECRET_ARN', fileVariable: 'PROTOCOL_TEST_SECRET_FILE' };
/** The store of the secret `secretId`, its document handed over as JSON (undefined when the secret has no text). */
const storeOf = (secretId: string) => {
  process.env.PROTOCOL_TEST_SECRET_ARN = secretId;
  return jsonSecretStore<unknown>(location, { parse: (json) => json, serialize: (value) => value });
};
const uuid = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

/** What must be the same in two requests; the signature's credential scope without its date. */
const shape = ({ method, path, headers, body }: Recorded) => ({
  method,
  path,
  target: headers['x-amz-target'],
  contentType: headers['content-type'],
  securityToken: headers['x-amz-security-token'],
  scope: /Credential=([^,]+)/.exec(String(headers.authorization))?.[1]?.split('/').slice(2),
  body,
});

let sdk: SecretsManagerClient;
const saved = { ...process.env };

beforeAll(async () => {
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const endpoint = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  sdk = new SecretsManagerClient({ endpoint, region: 'eu-west-1', credentials });
  // The execution role's credentials, as Lambda puts them in the environment.
  Object.assign(process.env, {
    SECRETS_MANAGER_ENDPOINT: endpoint,
    AWS_REGION: 'us-west-2',
    AWS_ACCESS_KEY_ID: credentials.accessKeyId,
    AWS_SECRET_ACCESS_KEY: credentials.secretAccessKey,
    AWS_SESSION_TOKEN: credentials.sessionToken,
  });
  // A profile would take the credential chain past the environment (the admin CLI's case).
  delete process.env.AWS_PROFILE;
});
afterAll(() => {
  sdk.destroy();
  server.close();
  process.env = saved;
});
beforeEach(() => {
  requests.length = 0;
  faultsLeft = 0;
});

test('a read is the request the SDK sends, and gives the secret’s JSON', async () => {
  const secretId = arn('TokenKeys');
  secrets.set(secretId, '{"current":"1","k1":"key text"}');
  const sdkAnswer = await sdk.send(new GetSecretValueCommand({ SecretId: secretId }));
  expect(await storeOf(secretId).read()).toEqual(JSON.parse(String(sdkAnswer.SecretString)));

  const [theirs, ours] = requests.map(shape);
  expect(ours).toEqual(theirs);
  expect(ours).toEqual({
    method: 'POST',
    path: '/',
    target: 'secretsmanager.GetSecretValue',
    contentType: 'application/x-amz-json-1.1',
    securityToken: credentials.sessionToken,
    scope: ['eu-west-1', 'secretsmanager', 'aws4_request'],
    body: { SecretId: secretId },
  });
  expect(requests[1]?.headers.authorization).toMatch(/^AWS4-HMAC-SHA256 Credential=AKIDPROTOCOLTEST\/\d{8}\//);
  // The operation is signed: no one on the way can turn a read into another call.
  expect(/SignedHeaders=([^,]+)/.exec(String(requests[1]?.headers.authorization))?.[1]?.split(';')).toContain('x-amz-target');
});

test('a write is the request the SDK sends, its new version named by a UUID as the SDK names it', async () => {
  const secretId = arn('SigningKeys');
  const document = { keys: [{ kid: 'k', createdAt: '2025-01-01T00:00:00.000Z' }] };
  await sdk.send(new PutSecretValueCommand({ SecretId: secretId, SecretString: JSON.stringify(document) }));
  await storeOf(secretId).write(document);

  const [theirs, ours] = requests.map(shape);
  for (const request of [theirs, ours]) expect(request?.body.ClientRequestToken).toMatch(uuid);
  const withoutToken = (request: typeof ours) => ({ ...request, body: { ...request?.body, ClientRequestToken: undefined } });
  expect(withoutToken(ours)).toEqual(withoutToken(theirs));
  expect(ours).toMatchObject({
    target: 'secretsmanager.PutSecretValue',
    contentType: 'application/x-amz-json-1.1',
    scope: ['eu-west-1', 'secretsmanager', 'aws4_request'],
    body: { SecretId: secretId, SecretString: JSON.stringify(document) },
  });
  expect(await storeOf(secretId).read()).toEqual(document);
});

test('a secret without a string value reads as nothing, as before its first value', async () => {
  const secretId = arn('Empty');
  secrets.delete(secretId);
  expect((await sdk.send(new GetSecretValueCommand({ SecretId: secretId }))).SecretString).toBeUndefined();
  expect(await storeOf(secretId).read()).toBeUndefined();
});

test.each(['missing', 'missing-namespaced'])(
  'an error answer (%s) is thrown with its status and the type the SDK names it by, never its message',
  async (name) => {
    const secretId = arn(name);
    const theirs = await sdk.send(new GetSecretValueCommand({ SecretId: secretId })).catch((error: unknown) => error);
    expect(theirs).toBeInstanceOf(ResourceNotFoundException);

    for (const attempt of [() => storeOf(secretId).read(), () => storeOf(secretId).write({ current: '1' })]) {
      const ours = await attempt().catch((error: unknown) => error);
      expect(ours).toBeInstanceOf(SecretsManagerError);
      expect(ours).toMatchObject({ status: 400, code: (theirs as ResourceNotFoundException).name });
      expect((ours as Error).message).toMatch(
        /^Secrets Manager (GetSecretValue|PutSecretValue) failed: 400 ResourceNotFoundException$/,
      );
      expect((ours as Error).message).not.toContain('MESSAGE-TEXT');
    }
  },
);

test('a server error is tried three times in all, as by the SDK, a retried write staying one version', async () => {
  const secretId = arn('Flaky');
  faultsLeft = 2;
  await sdk.send(new PutSecretValueCommand({ SecretId: secretId, SecretString: '{"current":"1"}' }));
  faultsLeft = 2;
  await storeOf(secretId).write({ current: '2' });
  const tokens = requests.map((request) => request.body.ClientRequestToken);
  expect(tokens).toHaveLength(6);
  for (const token of tokens) expect(token).toMatch(uuid);
  expect(new Set(tokens.slice(0, 3)).size).toBe(1);
  expect(new Set(tokens.slice(3)).size).toBe(1);

  requests.length = 0;
  faultsLeft = 3;
  await expect(storeOf(secretId).read()).rejects.toMatchObject({ status: 500, code: 'InternalServiceError' });
  expect(requests).toHaveLength(3);
});

test('a secret named without an ARN is read in the functions’ own region', async () => {
  secrets.set('TokenKeys', '{}');
  expect(await storeOf('TokenKeys').read()).toEqual({});
  expect(shape(requests[0] as Recorded).scope).toEqual(['us-west-2', 'secretsmanager', 'aws4_request']);
});
