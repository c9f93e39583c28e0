import { readFile, writeFile } from 'node:fs/promises';
import { GetSecretValueCommand, PutSecretValueCommand, SecretsManagerClient } from '@aws-sdk/client-secrets-manager';

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

/** One client per region: a secret is read in its own region (the edge stack's functions read the service's, in another). */
const secretsClients = new Map<string, SecretsManagerClient>();
export const secretsClientFor = (secretArn: string): SecretsManagerClient => {
  // arn:aws:secretsmanager:<region>:<account>:secret:<name>; a bare name is this region's.
  const region = secretArn.startsWith('arn:') ? secretArn.split(':')[3] : undefined;
  const key = region ?? '';
  let client = secretsClients.get(key);
  if (!client) {
    client = new SecretsManagerClient(region ? { region } : {});
    secretsClients.set(key, client);
  }
  return client;
};

/** The store named by `location`'s variables, read as they are now; throws when neither is set. */
export function jsonSecretStore<T>(location: JsonSecretLocation, format: JsonSecretFormat<T>): JsonSecretStore<T> {
  const parseText = (text: string | undefined) => format.parse(text ? (JSON.parse(text) as unknown) : undefined);
  const secretArn = process.env[location.secretArnVariable];
  if (secretArn) {
    const client = secretsClientFor(secretArn);
    return {
      read: async () => parseText((await client.send(new GetSecretValueCommand({ SecretId: secretArn }))).SecretString),
      write: async (value) => {
        await client.send(
          new PutSecretValueCommand({ SecretId: secretArn, SecretString: JSON.stringify(format.serialize(value)) }),
        );
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
