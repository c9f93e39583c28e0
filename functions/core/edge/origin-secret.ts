import { timingSafeEqual } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { GetSecretValueCommand, ResourceNotFoundException, SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import { secretRegion } from '#functions/core/keyrings/json-secret.ts';
import { KeyringCache } from '#functions/core/keyrings/keyring-cache.ts';

/** The header CloudFront adds to every request it sends the API, with the origin secret's value. */
export const ORIGIN_HEADER = 'x-origin-verify';
/**
 * The secret's versions the API accepts: the current one; the pending one, which a rotation puts on
 * the distributions before it becomes current; and the previous one, which edge locations may still
 * send while a rotation's change reaches them (and until the next rotation).
 */
export const ACCEPTED_STAGES = ['AWSCURRENT', 'AWSPENDING', 'AWSPREVIOUS'] as const;
/** How long API Gateway keeps the authorizer's answer for one header value (the twin's gateway alike). */
export const AUTHORIZER_CACHE_SECONDS = 300;
/** Our values are 48 characters: a longer header is none of ours, and costs no read. */
const maxValueLength = 128;

/**
 * One SDK client per region: the origin authorizer, a function of its own, reads the edge stack's secret in
 * us-east-1 with the SDK (whose ResourceNotFoundException acceptedValues catches). The route functions' keyrings
 * (keyrings/json-secret.ts) call Secrets Manager without the SDK: no route function may import this module.
 */
const secretsClients = new Map<string, SecretsManagerClient>();
export const secretsClientFor = (secretArn: string): SecretsManagerClient => {
  const region = secretRegion(secretArn);
  const key = region ?? '';
  let client = secretsClients.get(key);
  if (!client) {
    client = new SecretsManagerClient(region ? { region } : {});
    secretsClients.set(key, client);
  }
  return client;
};

/**
 * The values a secret accepts (its current, pending and previous versions' values): a stage the secret
 * has no version for (no pending one between rotations, no previous one before the first) is none.
 */
export async function acceptedValues(secretId: string, client: Pick<SecretsManagerClient, 'send'>): Promise<string[]> {
  const versions = await Promise.all(
    ACCEPTED_STAGES.map((VersionStage) =>
      client.send(new GetSecretValueCommand({ SecretId: secretId, VersionStage })).then(
        (answer) => answer.SecretString,
        (error: unknown) => {
          if (error instanceof ResourceNotFoundException && VersionStage !== 'AWSCURRENT') return undefined;
          throw error;
        },
      ),
    ),
  );
  return versions.filter((value): value is string => Boolean(value));
}

/**
 * Where the values live: the edge stack's secret in us-east-1 on AWS (ORIGIN_SECRET_ARN, its ARN without
 * the six characters Secrets Manager adds: the service's stack, deployed first, knows its name and region,
 * not its full ARN), or a file `{"values": [...]}` on the local twin (ORIGIN_SECRET_FILE).
 */
async function readValues(): Promise<string[]> {
  const secretArn = process.env.ORIGIN_SECRET_ARN;
  if (secretArn) return acceptedValues(secretArn, secretsClientFor(secretArn));
  const file = process.env.ORIGIN_SECRET_FILE;
  if (!file) throw new Error('Missing ORIGIN_SECRET_ARN (AWS) or ORIGIN_SECRET_FILE (local twin)');
  const { values } = JSON.parse(await readFile(file, 'utf8')) as { values?: unknown };
  return Array.isArray(values) ? values.filter((value): value is string => typeof value === 'string' && value !== '') : [];
}

/** The accepted values, kept five minutes and read again early (but not per made-up value) for one it lacks. */
const cache = new KeyringCache(readValues, maxValueLength);

const same = (a: string, b: string) => {
  const left = Buffer.from(a);
  const right = Buffer.from(b);
  return left.length === right.length && timingSafeEqual(left, right);
};

/**
 * Whether a request's `x-origin-verify` value says CloudFront sent it. A value the cached copy lacks, and
 * that the re-read limit kept from being checked afresh, throws (`KeyringUnsure`) instead of saying no:
 * API Gateway caches a no for five minutes, and a new value a rotation has just put on the distributions
 * must not be refused that long because made-up values used up the re-reads.
 */
export async function cameThroughTheEdge(value: string | undefined): Promise<boolean> {
  if (!value) return false;
  const found = await cache.find(value, (values) => (values.some((accepted) => same(accepted, value)) ? true : undefined), {
    unsure: 'throw',
  });
  return found === true;
}
