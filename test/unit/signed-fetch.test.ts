/**
 * The payload bucket's and the keyrings' requests are signed by functions/core/store/signed-fetch.ts,
 * not by an SDK client, and neither fauxqs nor the twin checks a signature: held here to AWS's own
 * worked example of a Signature Version 4 request to S3 ("Example: GET Object", Amazon S3 API
 * Reference, Authenticating Requests: Using the Authorization Header,
 * https://docs.aws.amazon.com/AmazonS3/latest/API/sig-v4-header-based-auth.html): its example keys,
 * instant, bucket and Range header, and the Authorization header the page gives.
 */
import { afterEach, expect, test, vi } from 'vitest';
import { signedFetch } from '#functions/core/store/signed-fetch.ts';

afterEach(() => {
  vi.useRealTimers();
  vi.unstubAllGlobals();
  vi.unstubAllEnvs();
});

test("a GET of an S3 object is signed as AWS's worked example says", async () => {
  vi.stubEnv('AWS_ACCESS_KEY_ID', 'AKIAIOSFODNN7EXAMPLE');
  vi.stubEnv('AWS_SECRET_ACCESS_KEY', 'wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY');
  vi.stubEnv('AWS_SESSION_TOKEN', '');
  vi.useFakeTimers({ toFake: ['Date'], now: new Date('2013-05-24T00:00:00Z') });
  const sent: Array<{ url: string; headers: Record<string, string> }> = [];
  vi.stubGlobal('fetch', async (url: string, init: { headers: Record<string, string> }) => {
    sent.push({ url, headers: init.headers });
    return new Response('', { status: 200 });
  });

  await signedFetch('s3', 'us-east-1').fetch('https://examplebucket.s3.amazonaws.com/test.txt', {
    method: 'GET',
    headers: { Range: 'bytes=0-9' },
  });

  expect(sent).toHaveLength(1);
  const [request] = sent as [(typeof sent)[number]];
  expect(request.url).toBe('https://examplebucket.s3.amazonaws.com/test.txt');
  // The page writes its parts with a comma alone, the SDK's signer with a comma and a space: S3 takes both.
  expect(request.headers.authorization?.replaceAll(', ', ',')).toBe(
    'AWS4-HMAC-SHA256 Credential=AKIAIOSFODNN7EXAMPLE/20130524/us-east-1/s3/aws4_request,' +
      'SignedHeaders=host;range;x-amz-content-sha256;x-amz-date,' +
      'Signature=f0e8bdb87c964420e857bd35b5d6ed310bd44f0170aba48dd91039c6036bdb41',
  );
  expect(request.headers['x-amz-date']).toBe('20130524T000000Z');
  expect(request.headers['x-amz-content-sha256']).toBe('e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855');
});
