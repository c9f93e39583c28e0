/**
 * The origin secret's rotation function (Secrets Manager calls it every `originSecretRotationDays`, or
 * on `aws secretsmanager rotate-secret`): see functions/core/edge/origin-secret-rotation.ts. The
 * distributions whose origin header it sets are in ORIGIN_DISTRIBUTION_IDS (comma-separated).
 */
import { CloudFrontClient } from '@aws-sdk/client-cloudfront';
import { SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import { type RotationEvent, rotateOriginSecret } from '#functions/core/edge/origin-secret-rotation.ts';

const clients = { secrets: new SecretsManagerClient({}), cloudfront: new CloudFrontClient({}) };
const distributionIds = (process.env.ORIGIN_DISTRIBUTION_IDS ?? '').split(',').filter(Boolean);

export async function handler(event: RotationEvent): Promise<void> {
  if (distributionIds.length === 0) throw new Error('Missing ORIGIN_DISTRIBUTION_IDS');
  await rotateOriginSecret(event, distributionIds, clients);
}
