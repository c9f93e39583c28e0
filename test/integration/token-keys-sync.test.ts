/**
 * The edge stack's custom resource always answers CloudFormation at its response URL, failure
 * included (a custom resource that does not answer holds a deploy for an hour), with the fields
 * CloudFormation requires. A local HTTP server plays the pre-signed URL.
 */
import { once } from 'node:events';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { CloudFormationCustomResourceEvent } from 'aws-lambda';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { handler } from '#functions/edge/token-keys-sync.ts';

const answers: Array<{ method?: string; body: Record<string, unknown> }> = [];
const server = createServer((request, response) => {
  let text = '';
  request.on('data', (chunk) => {
    text += chunk;
  });
  request.on('end', () => {
    answers.push({ method: request.method, body: JSON.parse(text) as Record<string, unknown> });
    response.end();
  });
});
let url = '';
const saved = { ...process.env };

beforeAll(async () => {
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/presigned?signature=x`;
  // No keyring anywhere: the sync cannot read the keys.
  delete process.env.TOKEN_KEYS_SECRET_ARN;
  delete process.env.TOKEN_KEYS_FILE;
});
afterAll(() => {
  server.close();
  process.env = saved;
});

const event = (RequestType: 'Create' | 'Delete'): CloudFormationCustomResourceEvent =>
  ({
    RequestType,
    ResponseURL: url,
    StackId: 'arn:aws:cloudformation:us-east-1:123456789012:stack/BiTenantAdmin-prod-edge/1',
    RequestId: `request-${RequestType}`,
    LogicalResourceId: 'TokenKeysInStore',
    ResourceType: 'Custom::TokenKeysSync',
    ServiceToken: 'arn:aws:lambda:us-east-1:123456789012:function:sync',
    ResourceProperties: { ServiceToken: 'x', KeyValueStoreArn: 'arn:aws:cloudfront::123456789012:key-value-store/k' },
    ...(RequestType === 'Delete' ? { PhysicalResourceId: 'arn:aws:cloudfront::123456789012:key-value-store/k' } : {}),
  }) as CloudFormationCustomResourceEvent;

test('a sync that fails still answers, FAILED with the reason, so the deploy stops at once', async () => {
  await handler(event('Create'));
  expect(answers.at(-1)).toEqual({
    method: 'PUT',
    body: {
      Status: 'FAILED',
      Reason: expect.stringContaining('Missing TOKEN_KEYS_SECRET_ARN'),
      PhysicalResourceId: 'arn:aws:cloudfront::123456789012:key-value-store/k',
      StackId: event('Create').StackId,
      RequestId: 'request-Create',
      LogicalResourceId: 'TokenKeysInStore',
    },
  });
});

test('a delete touches nothing and answers SUCCESS', async () => {
  await handler(event('Delete'));
  expect(answers.at(-1)?.body).toMatchObject({ Status: 'SUCCESS', RequestId: 'request-Delete' });
});
