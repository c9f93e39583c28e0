/**
 * The service stack's first-signing-key custom resource (functions/deploy/first-signing-key.ts), run
 * as CloudFormation runs it: against a keyring kept where the twin keeps its own (a file,
 * SIGNING_KEYS_FILE; the same store code reads a Secrets Manager secret on AWS), answering a local
 * HTTP server that plays the pre-signed response URL. A key is made once, whatever CloudFormation
 * sends after; every request is answered; no key material is logged or answered.
 */
import { once } from 'node:events';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { CloudFormationCustomResourceEvent } from 'aws-lambda';
import { afterAll, beforeAll, beforeEach, expect, test, vi } from 'vitest';
import { logger } from '#functions/core/observability/logger.ts';
import { type Keyring, keyringStore, newSigningKey, rotateKeyring } from '#functions/core/sso/signing-keys.ts';
import { handler } from '#functions/deploy/first-signing-key.ts';

const answers: Array<{ method?: string; contentType?: string; body: Record<string, unknown> }> = [];
const server = createServer((request, response) => {
  let text = '';
  request.on('data', (chunk) => {
    text += chunk;
  });
  request.on('end', () => {
    answers.push({
      method: request.method,
      contentType: request.headers['content-type'],
      body: JSON.parse(text) as Record<string, unknown>,
    });
    response.end();
  });
});
let url = '';
const scratch = mkdtempSync(join(tmpdir(), 'first-signing-key-'));
const keyringFile = join(scratch, 'jwt-keys.json');
const saved = { ...process.env };
const secretArn = 'arn:aws:secretsmanager:eu-west-1:123456789012:secret:SigningKeys-abc';

beforeAll(async () => {
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/presigned?X-Amz-Signature=x`;
  // This test's own keyring, not the running twin's.
  delete process.env.SIGNING_KEYS_SECRET_ARN;
  process.env.SIGNING_KEYS_FILE = keyringFile;
});
afterAll(() => {
  server.close();
  process.env = saved;
  rmSync(scratch, { recursive: true, force: true });
});
beforeEach(() => {
  rmSync(keyringFile, { force: true });
  answers.length = 0;
});

const event = (RequestType: 'Create' | 'Update' | 'Delete', requestId: string = RequestType): CloudFormationCustomResourceEvent =>
  ({
    RequestType,
    ResponseURL: url,
    StackId: 'arn:aws:cloudformation:eu-west-1:123456789012:stack/BiTenantAdmin-prod/1',
    RequestId: requestId,
    LogicalResourceId: 'FirstSigningKeyInKeyring',
    ResourceType: 'Custom::FirstSigningKey',
    ServiceToken: 'arn:aws:lambda:eu-west-1:123456789012:function:first-signing-key',
    ResourceProperties: { ServiceToken: 'x', SecretArn: secretArn },
    ...(RequestType === 'Create' ? {} : { PhysicalResourceId: secretArn, OldResourceProperties: {} }),
  }) as CloudFormationCustomResourceEvent;

const keyringText = () => readFileSync(keyringFile, 'utf8');
const keyring = () => JSON.parse(keyringText()) as Keyring;

/** Runs the handler and returns every line it logged, the informational ones included (stdout and stderr). */
async function logOf(run: () => Promise<void>): Promise<string> {
  const level = logger.getLevelName();
  logger.setLogLevel('INFO');
  const written: string[] = [];
  const capture = (chunk: unknown) => {
    written.push(String(chunk));
    return true;
  };
  const stdout = vi.spyOn(process.stdout, 'write').mockImplementation(capture);
  const stderr = vi.spyOn(process.stderr, 'write').mockImplementation(capture);
  try {
    await run();
  } finally {
    stdout.mockRestore();
    stderr.mockRestore();
    logger.setLogLevel(level);
  }
  return written.join('');
}

/** Every string of the keyring's private keys, none of which may leave the secret. */
const privateParts = (ring: Keyring) =>
  ring.keys.flatMap((key) => Object.values(key.privateJwk).filter((value): value is string => typeof value === 'string'));

test('a Create makes the first key, and answers SUCCESS with the fields CloudFormation requires', async () => {
  const log = await logOf(() => handler(event('Create')));
  const { keys } = keyring();
  expect(keys).toHaveLength(1);
  expect(keys[0]).toMatchObject({ kid: expect.any(String), privateJwk: { kty: 'EC', crv: 'P-256' } });
  expect(keys[0]?.retiredAt).toBeUndefined();
  expect(answers).toEqual([
    {
      method: 'PUT',
      // The pre-signed URL is signed for no content type.
      contentType: '',
      body: {
        Status: 'SUCCESS',
        Reason: `First signing key ${keys[0]?.kid} made`,
        PhysicalResourceId: secretArn,
        StackId: event('Create').StackId,
        RequestId: 'Create',
        LogicalResourceId: 'FirstSigningKeyInKeyring',
      },
    },
  ]);
  expect(log).toContain('First signing key');
  for (const part of privateParts(keyring())) {
    expect(log).not.toContain(part);
    expect(JSON.stringify(answers)).not.toContain(part);
  }
});

test('a retried Create, an Update and a Delete add nothing to a keyring that has a key, and each is answered', async () => {
  await handler(event('Create'));
  const first = keyringText();
  await handler(event('Create', 'Create-retried'));
  await handler(event('Update'));
  await handler(event('Delete'));
  expect(keyringText()).toBe(first);
  expect(answers.map(({ body }) => [body.RequestId, body.Status, body.PhysicalResourceId])).toEqual([
    ['Create', 'SUCCESS', secretArn],
    ['Create-retried', 'SUCCESS', secretArn],
    ['Update', 'SUCCESS', secretArn],
    ['Delete', 'SUCCESS', secretArn],
  ]);
  expect(answers[1]?.body.Reason).toBe('The keyring already has an active signing key: nothing made');
});

test('a keyring an operator already rotated keeps its keys as they are', async () => {
  const store = keyringStore();
  await store.write(rotateKeyring(rotateKeyring({ keys: [] }, await newSigningKey()), await newSigningKey()));
  const rotated = keyringText();
  await handler(event('Create'));
  expect(keyringText()).toBe(rotated);
  expect(answers.at(-1)?.body.Status).toBe('SUCCESS');
});

test('a Delete makes no key, even in an empty keyring', async () => {
  await handler(event('Delete'));
  expect(() => keyringText()).toThrow(/ENOENT/);
  expect(answers.at(-1)?.body).toMatchObject({ Status: 'SUCCESS', RequestId: 'Delete' });
});

test('a keyring that cannot be read is answered FAILED, saying why without quoting the secret', async () => {
  // JSON.parse's message would quote the text around the bad token: here, the private key.
  const secretText = '{"keys":[{"kid":"k","privateJwk":{"d":SECRETPRIVATEPART}}]}';
  expect(() => JSON.parse(secretText)).toThrow(/SECRETPRIV/);
  writeFileSync(keyringFile, secretText);
  const log = await logOf(() => handler(event('Create')));
  expect(answers.at(-1)?.body).toMatchObject({
    Status: 'FAILED',
    Reason: `Making the first signing key in ${secretArn} failed: the keyring secret is not valid JSON`,
    PhysicalResourceId: secretArn,
  });
  expect(log).toContain('Making the first signing key failed');
  expect(log).not.toContain('SECRETPRIV');
  expect(keyringText()).toBe(secretText);
});
