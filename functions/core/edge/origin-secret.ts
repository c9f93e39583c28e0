import { timingSafeEqual } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { GetSecretValueCommand, ResourceNotFoundException, SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
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
 * Where the values live: the edge stack's secret in us-east-1 on AWS (ORIGIN_SECRET_ID, a name, and
 * ORIGIN_SECRET_REGION: the service's stack cannot take the ARN from the edge stack, which deploys after
 * it), or a file `{"values": [...]}` on the local twin (ORIGIN_SECRET_FILE).
 */
async function readValues(): Promise<string[]> {
  const secretId = process.env.ORIGIN_SECRET_ID;
  if (secretId) {
    client ??= new SecretsManagerClient({ region: process.env.ORIGIN_SECRET_REGION });
    const versions = await Promise.all(
      ACCEPTED_STAGES.map((VersionStage) =>
        (client as SecretsManagerClient).send(new GetSecretValueCommand({ SecretId: secretId, VersionStage })).then(
          (answer) => answer.SecretString,
          // No pending version between rotations, no previous one before the first.
          (error: unknown) => {
            if (error instanceof ResourceNotFoundException && VersionStage !== 'AWSCURRENT') return undefined;
            throw error;
          },
        ),
      ),
    );
    return versions.filter((value): value is string => Boolean(value));
  }
  const file = process.env.ORIGIN_SECRET_FILE;
  if (!file) throw new Error('Missing ORIGIN_SECRET_ID (AWS) or ORIGIN_SECRET_FILE (local twin)');
  const { values } = JSON.parse(await readFile(file, 'utf8')) as { values?: unknown };
  return Array.isArray(values) ? values.filter((value): value is string => typeof value === 'string' && value !== '') : [];
}

let client: SecretsManagerClient | undefined;
/** The accepted values, kept five minutes and read again early (but not per made-up value) for one it lacks. */
const cache = new KeyringCache(readValues, maxValueLength);

const same = (a: string, b: string) => {
  const left = Buffer.from(a);
  const right = Buffer.from(b);
  return left.length === right.length && timingSafeEqual(left, right);
};

/** Whether a request's `x-origin-verify` value says CloudFront sent it. */
export async function cameThroughTheEdge(value: string | undefined): Promise<boolean> {
  if (!value) return false;
  const found = await cache.find(value, (values) => (values.some((accepted) => same(accepted, value)) ? true : undefined));
  return found === true;
}
