import { expect, inject, test } from 'vitest';
import { api } from '#test/support/api.ts';

test('health answers through the twin and the local client token works', async () => {
  expect((await api('GET', '/health')).status).toBe(200);
  const whoami = await api('GET', '/whoami', { token: inject('localClientToken') });
  expect(whoami.status).toBe(200);
  expect(whoami.body.data.kind).toBe('client');
});
