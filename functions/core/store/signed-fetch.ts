import { defaultProvider } from '@aws-sdk/credential-provider-node';
import { Sha256 } from '@smithy/core/checksum';
import { SignatureV4 } from '@smithy/signature-v4';

/**
 * A request to an AWS API signed with SigV4 by the SDK's own signer and sent with fetch, for the
 * few calls whose service's SDK client would add more to every bundle than the calls are worth (the
 * payload bucket's three, Secrets Manager's two: their clients were about 130 KB and 14 KB of each
 * bundle that reached them; the signer is in every bundle already, with the DynamoDB client). Three
 * attempts in all on a 5xx, a 429 or a lost connection, as the SDK's standard retry mode makes, with
 * jittered exponential back-off.
 */
export interface SignedFetch {
  fetch(url: string, init: SignedRequestInit): Promise<Response>;
}

export interface SignedRequestInit {
  method: 'GET' | 'PUT' | 'DELETE' | 'POST';
  headers?: Record<string, string>;
  body?: string;
}

/**
 * The credentials of the default chain: in the Lambda bundles the environment only, as Lambda gives
 * the execution role's (lib/project-function.ts puts functions/core/lambda-credentials.ts in its
 * place); the admin CLI, unbundled, keeps the whole chain (`AWS_PROFILE`, SSO, …).
 */
let credentials: ReturnType<typeof defaultProvider> | undefined;

const attempts = 3;
const retryable = (status: number) => status === 429 || status >= 500;
const pause = (attempt: number) => new Promise((resolve) => setTimeout(resolve, Math.random() * 100 * 2 ** attempt));

/**
 * Signs for `service` in `region`. S3 signs the path as sent (`uriEscapePath: false`) and wants the
 * payload's hash in `x-amz-content-sha256`; other services escape the path again and need no hash
 * header (https://docs.aws.amazon.com/IAM/latest/UserGuide/create-signed-request.html).
 */
export function signedFetch(service: string, region: string): SignedFetch {
  credentials ??= defaultProvider();
  const signer = new SignatureV4({
    service,
    region,
    credentials,
    sha256: Sha256,
    uriEscapePath: service !== 's3',
    applyChecksum: service === 's3',
  });
  return {
    async fetch(url, init) {
      const { protocol, hostname, port, pathname, host } = new URL(url);
      const signed = await signer.sign({
        method: init.method,
        protocol,
        hostname,
        port: port ? Number(port) : undefined,
        path: pathname,
        query: {},
        headers: { ...init.headers, host },
        body: init.body,
      });
      const { host: _host, ...headers } = signed.headers;
      for (let attempt = 1; ; attempt++) {
        try {
          const response = await fetch(url, { method: init.method, headers, body: init.body });
          if (!retryable(response.status) || attempt === attempts) return response;
          await response.arrayBuffer();
        } catch (error) {
          if (attempt === attempts) throw error;
        }
        await pause(attempt);
      }
    },
  };
}
