import { expect, inject, test } from 'vitest';
import { runToEnd } from '#test/support/processes.ts';

test('the typed client walkthrough (examples/typescript) runs against the twin as written', async () => {
  const result = await runToEnd('examples/typescript/walkthrough.ts', [inject('twinUrl'), inject('localClientToken')]);
  expect(result.code, result.output).toBe(0);
  const outcome = JSON.parse(result.output.trim().split('\n').at(-1) ?? '{}');
  expect(outcome).toMatchObject({
    plan: [expect.any(Number)],
    reload: ['enqueued'],
    loginUrl: expect.stringContaining('/auth/api/'),
    listedOnce: true,
    refused: '404 user_not_found',
  });
});
