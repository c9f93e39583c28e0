import {
  type CloudFrontClient,
  type DistributionConfig,
  GetDistributionConfigCommand,
  UpdateDistributionCommand,
} from '@aws-sdk/client-cloudfront';
import {
  DescribeSecretCommand,
  GetRandomPasswordCommand,
  GetSecretValueCommand,
  PutSecretValueCommand,
  ResourceNotFoundException,
  type SecretsManagerClient,
  UpdateSecretVersionStageCommand,
} from '@aws-sdk/client-secrets-manager';
import { ORIGIN_HEADER } from './origin-secret.ts';

/** The steps Secrets Manager calls a rotation function with, in this order. */
export type RotationStep = 'createSecret' | 'setSecret' | 'testSecret' | 'finishSecret';

export interface RotationEvent {
  SecretId: string;
  ClientRequestToken: string;
  Step: RotationStep;
}

export interface RotationClients {
  secrets: Pick<SecretsManagerClient, 'send'>;
  cloudfront: Pick<CloudFrontClient, 'send'>;
}

/** The length of each value: 48 letters and digits, about 285 bits. */
export const ORIGIN_SECRET_LENGTH = 48;

/**
 * Rotates the origin secret (AWS's four-step contract for rotation functions, with its staging labels:
 * https://docs.aws.amazon.com/secretsmanager/latest/userguide/rotate-secrets_lambda-functions.html) without a moment in which
 * CloudFront sends a value the API refuses: the API accepts the current, pending and previous values
 * (origin-secret.ts), so the new value is put on the distributions while pending (`setSecret`),
 * checked there (`testSecret`), and only then made current (`finishSecret`); the old one, now previous,
 * stays accepted while the change reaches every edge location, and until the next rotation.
 */
export async function rotateOriginSecret(event: RotationEvent, distributionIds: readonly string[], clients: RotationClients) {
  const { SecretId, ClientRequestToken: token } = event;
  const description = await clients.secrets.send(new DescribeSecretCommand({ SecretId }));
  const stages = description.VersionIdsToStages?.[token];
  if (!stages) throw new Error(`Version ${token} is not a version of the origin secret`);
  if (stages.includes('AWSCURRENT')) return; // finished already
  if (!stages.includes('AWSPENDING')) throw new Error(`Version ${token} is not pending rotation`);
  const pending = () =>
    clients.secrets
      .send(new GetSecretValueCommand({ SecretId, VersionId: token, VersionStage: 'AWSPENDING' }))
      .then((answer) => answer.SecretString ?? '');

  if (event.Step === 'createSecret') {
    try {
      await pending();
      return; // made by an earlier attempt of this step
    } catch (error) {
      if (!(error instanceof ResourceNotFoundException)) throw error;
    }
    const { RandomPassword } = await clients.secrets.send(
      new GetRandomPasswordCommand({ PasswordLength: ORIGIN_SECRET_LENGTH, ExcludePunctuation: true, IncludeSpace: false }),
    );
    await clients.secrets.send(
      new PutSecretValueCommand({
        SecretId,
        ClientRequestToken: token,
        SecretString: RandomPassword,
        VersionStages: ['AWSPENDING'],
      }),
    );
  } else if (event.Step === 'setSecret') {
    const value = await pending();
    for (const id of distributionIds) {
      const { DistributionConfig: config, ETag } = await clients.cloudfront.send(new GetDistributionConfigCommand({ Id: id }));
      if (!config) throw new Error(`Distribution ${id} has no configuration`);
      if (originHeaderValues(config, id).every((current) => current === value)) continue;
      await clients.cloudfront.send(
        new UpdateDistributionCommand({ Id: id, IfMatch: ETag, DistributionConfig: withOriginHeader(config, value) }),
      );
    }
  } else if (event.Step === 'testSecret') {
    const value = await pending();
    for (const id of distributionIds) {
      const { DistributionConfig: config } = await clients.cloudfront.send(new GetDistributionConfigCommand({ Id: id }));
      if (!config || originHeaderValues(config, id).some((current) => current !== value))
        throw new Error(`Distribution ${id} does not send the pending origin secret yet`);
    }
  } else {
    const current = Object.entries(description.VersionIdsToStages ?? {}).find(([, names]) => names.includes('AWSCURRENT'))?.[0];
    await clients.secrets.send(
      new UpdateSecretVersionStageCommand({
        SecretId,
        VersionStage: 'AWSCURRENT',
        MoveToVersionId: token,
        RemoveFromVersionId: current,
      }),
    );
  }
}

/** The origin header's value on each origin of the distribution that sends one; a distribution with none is misconfigured. */
function originHeaderValues(config: DistributionConfig, id: string): string[] {
  const values = (config.Origins?.Items ?? []).flatMap((origin) =>
    (origin.CustomHeaders?.Items ?? [])
      .filter((header) => header.HeaderName?.toLowerCase() === ORIGIN_HEADER)
      .map((header) => header.HeaderValue ?? ''),
  );
  if (values.length === 0) throw new Error(`Distribution ${id} has no origin that sends ${ORIGIN_HEADER}`);
  return values;
}

/** The configuration with `value` as every origin's origin header (nothing else changes). */
function withOriginHeader(config: DistributionConfig, value: string): DistributionConfig {
  return {
    ...config,
    Origins: config.Origins && {
      ...config.Origins,
      Items: config.Origins.Items?.map((origin) => ({
        ...origin,
        CustomHeaders: origin.CustomHeaders && {
          ...origin.CustomHeaders,
          Items: origin.CustomHeaders.Items?.map((header) =>
            header.HeaderName?.toLowerCase() === ORIGIN_HEADER ? { ...header, HeaderValue: value } : header,
          ),
        },
      })),
    },
  };
}
