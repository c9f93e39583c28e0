import { randomUUID } from 'node:crypto';
import { readFile, writeFile } from 'node:fs/promises';
import { signedFetch } from '#functions/core/store/signed-fetch.ts';

/**
 * One JSON document kept secret: a Secrets Manager secret on AWS, a file (mode 600) on the local
 * twin. The login-token signing keys (sso/signing-keys.ts) and the token MAC keys
 * (auth/token-keys.ts) are each one such document.
 */
export interface JsonSecretStore<T> {
  read(): Promise<T>;
  write(value: T): Promise<void>;
}

/** The environment variables that name the document: the secret's ARN (AWS), else the file (twin). */
export interface JsonSecretLocation {
  secretArnVariable: string;
  fileVariable: string;
}

/** How the document's JSON becomes the value and back; `parse` gets undefined for a secret or file with nothing yet. */
export interface JsonSecretFormat<T> {
  parse(json: unknown): T;
  serialize(value: T): unknown;
}

/**
 * The region a secret is in when its id says: an ARN's (arn:aws:secretsmanager:<region>:<account>:secret:<name>),
 * none for a bare name (this region's). The edge stack's functions read the service's secret, in another region.
 */
export const secretRegion = (secretId: string): string | undefined =>
  secretId.startsWith('arn:') ? secretId.split(':')[3] : undefined;

/** A request Secrets Manager refused: its HTTP status and the error's type (`ResourceNotFoundException`, …). */
export class SecretsManagerError extends Error {
  constructor(
    readonly status: number,
    readonly code: string | undefined,
    operation: string,
  ) {
    // Never the answer's message: short, and nothing of the secret in logs or a custom resource's reason.
    super(`Secrets Manager ${operation} failed: ${status} ${code ?? '(no error type)'}`);
    this.name = 'SecretsManagerError';
  }
}

/** The error's type: the JSON body's `__type`, which may carry a namespace (`…#Name`) or a suffix (`Name:…`). */
async function errorType(response: Response): Promise<string | undefined> {
  const body = (await response.json().catch(() => undefined)) as unknown;
  const type = body !== null && typeof body === 'object' ? (body as { __type?: unknown }).__type : undefined;
  return typeof type === 'string' ? type.split(':')[0]?.split('#').pop() : undefined;
}

/**
 * One call of Secrets Manager's JSON protocol, signed by store/signed-fetch.ts rather than through the SDK's client
 * (about 14 KB of every route's bundle): a POST to the region's endpoint naming the operation in `X-Amz-Target`
 * (https://docs.aws.amazon.com/secretsmanager/latest/apireference/API_GetSecretValue.html,
 * https://docs.aws.amazon.com/secretsmanager/latest/apireference/API_PutSecretValue.html). Any answer but a 2xx
 * is thrown as a SecretsManagerError (https://docs.aws.amazon.com/secretsmanager/latest/apireference/CommonErrors.html).
 * SECRETS_MANAGER_ENDPOINT is set only off AWS (tests).
 */
async function call(
  operation: 'GetSecretValue' | 'PutSecretValue',
  input: { SecretId: string; [field: string]: string },
): Promise<unknown> {
  const region = secretRegion(input.SecretId) ?? process.env.AWS_REGION;
  if (!region) throw new Error('Missing required environment variable AWS_REGION');
  const endpoint = process.env.SECRETS_MANAGER_ENDPOINT;
  const url = endpoint ? `${endpoint.replace(/\/+$/, '')}/` : `https://secretsmanager.${region}.amazonaws.com/`;
  const response = await signedFetch('secretsmanager', region).fetch(url, {
    method: 'POST',
    headers: { 'Content-Type': 'application/x-amz-json-1.1', 'X-Amz-Target': `secretsmanager.${operation}` },
    body: JSON.stringify(input),
  });
  if (!response.ok) throw new SecretsManagerError(response.status, await errorType(response), operation);
  return response.json();
}

/** The store named by `location`'s variables, read as they are now; throws when neither is set. */
export function jsonSecretStore<T>(location: JsonSecretLocation, format: JsonSecretFormat<T>): JsonSecretStore<T> {
  const parseText = (text: string | undefined) => format.parse(text ? (JSON.parse(text) as unknown) : undefined);
  const secretArn = process.env[location.secretArnVariable];
  if (secretArn) {
    return {
      read: async () => {
        const { SecretString } = (await call('GetSecretValue', { SecretId: secretArn })) as { SecretString?: string };
        return parseText(SecretString);
      },
      write: async (value) => {
        await call('PutSecretValue', {
          SecretId: secretArn,
          // The new version's id, which the SDK would make: a raw request must carry one (see PutSecretValue's page).
          // Made once, so that a retried request is the same version, not a second one.
          ClientRequestToken: randomUUID(),
          SecretString: JSON.stringify(format.serialize(value)),
        });
      },
    };
  }
  const file = process.env[location.fileVariable];
  if (!file) throw new Error(`Missing ${location.secretArnVariable} (AWS) or ${location.fileVariable} (local twin)`);
  return {
    read: async () => parseText(await readFile(file, 'utf8').catch(() => undefined)),
    write: (value) => writeFile(file, `${JSON.stringify(format.serialize(value), null, 2)}\n`, { mode: 0o600 }),
  };
}
