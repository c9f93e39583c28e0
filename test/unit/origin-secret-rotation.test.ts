/**
 * The origin secret's rotation, against fakes of Secrets Manager and CloudFront that keep state as
 * they do (version stages, distribution configs with ETags): at every step of a rotation, every value a
 * distribution may be sending is one the API accepts (current, pending or previous), and each step can
 * run twice, as Secrets Manager may call it again.
 */
import {
  type DistributionConfig,
  GetDistributionConfigCommand,
  PreconditionFailed,
  UpdateDistributionCommand,
} from '@aws-sdk/client-cloudfront';
import {
  DescribeSecretCommand,
  GetRandomPasswordCommand,
  GetSecretValueCommand,
  PutSecretValueCommand,
  ResourceNotFoundException,
  UpdateSecretVersionStageCommand,
} from '@aws-sdk/client-secrets-manager';
import { describe, expect, test } from 'vitest';
import { ACCEPTED_STAGES, ORIGIN_HEADER } from '#functions/core/edge/origin-secret.ts';
import { type RotationStep, rotateOriginSecret } from '#functions/core/edge/origin-secret-rotation.ts';

class FakeSecret {
  versions = new Map<string, { value?: string; stages: string[] }>([['v1', { value: 'first', stages: ['AWSCURRENT'] }]]);
  private passwords = 0;
  /** What RotateSecret does before calling the function: names the new version pending, without a value yet. */
  startRotation(token: string) {
    this.versions.set(token, { stages: ['AWSPENDING'] });
  }
  valueAt(stage: string) {
    return [...this.versions.values()].find((version) => version.stages.includes(stage))?.value;
  }
  accepted() {
    return ACCEPTED_STAGES.map((stage) => this.valueAt(stage)).filter(Boolean);
  }
  async send(command: object): Promise<Record<string, unknown>> {
    const input = (command as { input: Record<string, unknown> }).input;
    if (command instanceof DescribeSecretCommand)
      return { VersionIdsToStages: Object.fromEntries([...this.versions].map(([id, version]) => [id, [...version.stages]])) };
    if (command instanceof GetSecretValueCommand) {
      const version = this.versions.get(String(input.VersionId));
      if (version?.value === undefined || !version.stages.includes(String(input.VersionStage)))
        throw new ResourceNotFoundException({ message: 'no such version', $metadata: {} });
      return { SecretString: version.value };
    }
    if (command instanceof GetRandomPasswordCommand) return { RandomPassword: `new-${++this.passwords}` };
    if (command instanceof PutSecretValueCommand) {
      for (const version of this.versions.values())
        version.stages = version.stages.filter((stage) => !(input.VersionStages as string[]).includes(stage));
      this.versions.set(String(input.ClientRequestToken), {
        value: String(input.SecretString),
        stages: [...(input.VersionStages as string[])],
      });
      return {};
    }
    if (command instanceof UpdateSecretVersionStageCommand) {
      const from = this.versions.get(String(input.RemoveFromVersionId));
      const to = this.versions.get(String(input.MoveToVersionId));
      if (!from || !to) throw new Error('unknown version');
      for (const version of this.versions.values()) version.stages = version.stages.filter((stage) => stage !== 'AWSPREVIOUS');
      from.stages = [...from.stages.filter((stage) => stage !== 'AWSCURRENT'), 'AWSPREVIOUS'];
      to.stages = ['AWSCURRENT', ...to.stages.filter((stage) => stage !== 'AWSPENDING')];
      return {};
    }
    throw new Error(`unexpected ${command.constructor.name}`);
  }
}

class FakeCloudFront {
  configs = new Map<string, { config: DistributionConfig; etag: number }>();
  constructor(ids: string[], value: string) {
    for (const id of ids)
      this.configs.set(id, {
        etag: 1,
        config: {
          CallerReference: id,
          Comment: id,
          Enabled: true,
          DefaultCacheBehavior: undefined,
          Origins: {
            Quantity: 2,
            Items: [
              {
                Id: 'api',
                DomainName: 'd-1.execute-api',
                CustomHeaders: { Quantity: 1, Items: [{ HeaderName: ORIGIN_HEADER, HeaderValue: value }] },
              },
              {
                Id: 'front',
                DomainName: 'bi.example.net',
                CustomHeaders: { Quantity: 1, Items: [{ HeaderName: 'x-other', HeaderValue: 'kept' }] },
              },
            ],
          },
        } as DistributionConfig,
      });
  }
  sent(id: string) {
    return this.configs.get(id)?.config.Origins?.Items?.[0]?.CustomHeaders?.Items?.[0]?.HeaderValue;
  }
  async send(command: object): Promise<Record<string, unknown>> {
    const input = (command as { input: Record<string, unknown> }).input;
    const entry = this.configs.get(String(input.Id));
    if (!entry) throw new Error('no such distribution');
    if (command instanceof GetDistributionConfigCommand)
      return { DistributionConfig: structuredClone(entry.config), ETag: `E${entry.etag}` };
    if (command instanceof UpdateDistributionCommand) {
      if (input.IfMatch !== `E${entry.etag}`) throw new PreconditionFailed({ message: 'stale', $metadata: {} });
      entry.config = structuredClone(input.DistributionConfig as DistributionConfig);
      entry.etag += 1;
      return {};
    }
    throw new Error(`unexpected ${command.constructor.name}`);
  }
}

const steps: RotationStep[] = ['createSecret', 'setSecret', 'testSecret', 'finishSecret'];
const ids = ['E1API', 'E2TENANTS'];

describe('rotating the origin secret', () => {
  test('every value a distribution sends is accepted at every step; the new one ends current, the old one previous', async () => {
    const secrets = new FakeSecret();
    const cloudfront = new FakeCloudFront(ids, 'first');
    secrets.startRotation('v2');
    for (const step of steps) {
      await rotateOriginSecret({ SecretId: 's', ClientRequestToken: 'v2', Step: step }, ids, { secrets, cloudfront }).catch(
        (error: Error) => {
          throw new Error(`${step}: ${error.message}`);
        },
      );
      for (const id of ids) expect(secrets.accepted(), `${step} ${id}`).toContain(cloudfront.sent(id));
    }
    expect(secrets.valueAt('AWSCURRENT')).toBe('new-1');
    expect(secrets.valueAt('AWSPREVIOUS')).toBe('first');
    for (const id of ids) expect(cloudfront.sent(id)).toBe('new-1');
    // Only the origin header changed.
    expect(cloudfront.configs.get(ids[0] as string)?.config.Origins?.Items?.[1]?.CustomHeaders?.Items?.[0]?.HeaderValue).toBe(
      'kept',
    );
  });

  test('each step may run again without harm (no second password, no second update)', async () => {
    const secrets = new FakeSecret();
    const cloudfront = new FakeCloudFront(ids, 'first');
    secrets.startRotation('v2');
    for (const step of steps)
      for (let time = 0; time < 2; time++)
        await rotateOriginSecret({ SecretId: 's', ClientRequestToken: 'v2', Step: step }, ids, { secrets, cloudfront });
    expect(secrets.valueAt('AWSCURRENT')).toBe('new-1');
    expect(cloudfront.configs.get(ids[0] as string)?.etag).toBe(2);
  });

  test('a distribution that sends no origin header stops the rotation before the value becomes current', async () => {
    const secrets = new FakeSecret();
    const cloudfront = new FakeCloudFront(ids, 'first');
    const items = cloudfront.configs.get('E2TENANTS')?.config.Origins?.Items;
    if (items?.[0]) items[0].CustomHeaders = { Quantity: 0, Items: [] };
    secrets.startRotation('v2');
    await rotateOriginSecret({ SecretId: 's', ClientRequestToken: 'v2', Step: 'createSecret' }, ids, { secrets, cloudfront });
    await expect(
      rotateOriginSecret({ SecretId: 's', ClientRequestToken: 'v2', Step: 'setSecret' }, ids, { secrets, cloudfront }),
    ).rejects.toThrow(/E2TENANTS has no origin that sends x-origin-verify/);
    expect(secrets.valueAt('AWSCURRENT')).toBe('first');
  });
});
