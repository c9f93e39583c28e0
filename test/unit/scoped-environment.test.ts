import { expect, test } from 'vitest';
import { withEnvironment } from '#test/support/scoped-environment.ts';

const set = 'SCOPED_ENVIRONMENT_TEST_SET';
const unset = 'SCOPED_ENVIRONMENT_TEST_UNSET';

test('the variables are set for the work alone, and what was there comes back, unset staying unset, however it ends', async () => {
  process.env[set] = 'before';
  try {
    const seen = await withEnvironment({ [set]: 'during', [unset]: 'during' }, async () => [
      process.env[set],
      process.env[unset],
    ]);
    expect(seen).toEqual(['during', 'during']);
    expect([process.env[set], unset in process.env]).toEqual(['before', false]);

    await expect(
      withEnvironment({ [set]: 'failing', [unset]: 'failing' }, async () => {
        throw new Error('the work failed');
      }),
    ).rejects.toThrow('the work failed');
    expect([process.env[set], unset in process.env]).toEqual(['before', false]);
  } finally {
    delete process.env[set];
  }
});
