/**
 * The keyrings' cache (functions/core/keyrings/keyring-cache.ts) and the secrets it reads: an unknown id
 * makes one fresh read at most every few seconds; a caller that caches refusals (the origin authorizer)
 * hears "unsure" instead of "no" when a re-read was not allowed; the origin secret's values are its
 * current, pending and previous ones; a secret is read with a client of its own region.
 */
import { GetSecretValueCommand, ResourceNotFoundException } from '@aws-sdk/client-secrets-manager';
import { describe, expect, test } from 'vitest';
import { acceptedValues, secretsClientFor } from '#functions/core/edge/origin-secret.ts';
import { KeyringCache, KeyringUnsure } from '#functions/core/keyrings/keyring-cache.ts';

describe('KeyringCache', () => {
  const counted = (keyring: string[]) => {
    let reads = 0;
    const cache = new KeyringCache(async () => {
      reads += 1;
      return [...keyring];
    }, 64);
    const has = (id: string) => (values: string[]) => (values.includes(id) ? id : undefined);
    return { cache, has, reads: () => reads, keyring };
  };

  test('an id the cached copy lacks is read for again, but not twice within seconds, whatever the ids', async () => {
    const { cache, has, reads, keyring } = counted(['a']);
    expect(await cache.find('a', has('a'))).toBe('a');
    keyring.push('b');
    expect(await cache.find('b', has('b'))).toBe('b');
    expect(reads()).toBe(2);
    expect(await cache.find('made-up-1', has('made-up-1'))).toBeUndefined();
    expect(await cache.find('made-up-2', has('made-up-2'))).toBeUndefined();
    expect(reads()).toBe(2);
  });

  test('with unsure: throw, an id no fresh read could check throws; one a fresh read refused is still no', async () => {
    const { cache, has, reads, keyring } = counted(['a']);
    await cache.find('a', has('a'));
    // A fresh read for the first unknown id: it refuses it.
    expect(await cache.find('made-up', has('made-up'), { unsure: 'throw' })).toBeUndefined();
    expect(reads()).toBe(2);
    // A value rotated in just now, within the seconds no re-read is allowed: not refused, unsure.
    keyring.push('new');
    await expect(cache.find('new', has('new'), { unsure: 'throw' })).rejects.toBeInstanceOf(KeyringUnsure);
    // The refused one stays refused without a read.
    expect(await cache.find('made-up', has('made-up'), { unsure: 'throw' })).toBeUndefined();
    expect(reads()).toBe(2);
  });
});

describe('the origin secret’s accepted values', () => {
  const client = (stages: Record<string, string>) => ({
    send: async (command: unknown) => {
      const stage = (command as GetSecretValueCommand).input.VersionStage as string;
      if (!(command instanceof GetSecretValueCommand)) throw new Error('unexpected command');
      if (!(stage in stages)) throw new ResourceNotFoundException({ message: `no ${stage}`, $metadata: {} });
      return { SecretString: stages[stage] };
    },
  });

  test('are the current, pending and previous versions’ values, those the secret has', async () => {
    expect(await acceptedValues('s', client({ AWSCURRENT: 'now', AWSPENDING: 'next', AWSPREVIOUS: 'before' }) as never)).toEqual([
      'now',
      'next',
      'before',
    ]);
    expect(await acceptedValues('s', client({ AWSCURRENT: 'only' }) as never)).toEqual(['only']);
  });

  test('a secret without a current value is an error, not an empty list', async () => {
    await expect(acceptedValues('s', client({ AWSPENDING: 'next' }) as never)).rejects.toBeInstanceOf(ResourceNotFoundException);
  });
});

test('a secret is read in the region its ARN names (the edge stack reads the service’s, in another)', async () => {
  expect(await secretsClientFor('arn:aws:secretsmanager:eu-west-1:123456789012:secret:TokenKeys-abcdef').config.region()).toBe(
    'eu-west-1',
  );
  expect(
    await secretsClientFor(
      'arn:aws:secretsmanager:us-east-1:123456789012:secret:BiTenantAdmin-prod/origin-verify',
    ).config.region(),
  ).toBe('us-east-1');
});
