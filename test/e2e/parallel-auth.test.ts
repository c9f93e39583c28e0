/**
 * Parallel authentication (principals.ts `authenticateInParallel`), through the twin: a GET that
 * only reads starts its reads beside its token's lookup, and answers only once the lookup holds. A
 * token revoked during a burst of reads: every read sent after the revocation answered is 401 and
 * carries no data. A deleted tenant's token: 404 from then on. A token of the wrong kind: 403 before
 * any read.
 */
import { expect, test } from 'vitest';
import { api, getOk, newClient, newTenant } from '#test/support/api.ts';

type Outcome = { sentAt: number; status: number; body: unknown };

/**
 * Reads `path` with `token`, `width` at a time, each noting in `outcomes` when it was sent and what
 * it answered, until `enough` says so (asked before each read is sent).
 */
async function readUntil(path: string, token: string, width: number, outcomes: Outcome[], enough: () => boolean): Promise<void> {
  const lane = async () => {
    while (!enough()) {
      const sentAt = performance.now();
      const answer = await api('GET', path, { token });
      outcomes.push({ sentAt, status: answer.status, body: answer.body });
    }
  };
  await Promise.all(Array.from({ length: width }, lane));
}

test('a token revoked during a burst of reads: no read sent after the revocation answered returns data', async () => {
  const client = await newClient();
  const tenant = await newTenant(client.token);
  const login = `reader-${crypto.randomUUID().slice(0, 8)}`;
  expect((await api('POST', '/tenant/users', { token: tenant.token, body: { login, nome: 'Reader' } })).status).toBe(201);
  // The reads go on until 20 were sent after the revocation answered, however fast this machine is.
  const outcomes: Outcome[] = [];
  let revokedAt = Number.POSITIVE_INFINITY;
  const reads = readUntil(
    '/tenant/users',
    tenant.token,
    6,
    outcomes,
    () => outcomes.filter((read) => read.sentAt > revokedAt).length >= 20,
  );
  // Once a read answered the data, the client rotates the tenant's token, ending the old one at once.
  // (At most 50 reads: a token refused from the start fails the assertions below, not the time-out.)
  while (!outcomes.some((outcome) => outcome.status === 200) && outcomes.length < 50) {
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
  const rotated = await api('POST', `/tenants/${tenant.id}/token`, { token: client.token, body: { previousValidForSeconds: 0 } });
  // Noted before the check: the reads stop 20 reads later whatever the rotation answered.
  revokedAt = performance.now();
  expect(rotated.status).toBe(200);
  await reads;
  const after = outcomes.filter((outcome) => outcome.sentAt > revokedAt);
  expect(after.length, 'reads sent after the revocation').toBeGreaterThanOrEqual(20);
  for (const outcome of after) {
    expect(outcome.status).toBe(401);
    expect(JSON.stringify(outcome.body)).not.toContain(login);
  }
  // Before it, the token was good: its reads answered the data (each read's 401 or 200 is whole, never mixed).
  expect(outcomes.some((outcome) => outcome.status === 200 && JSON.stringify(outcome.body).includes(login))).toBe(true);
  for (const outcome of outcomes) expect([200, 401]).toContain(outcome.status);
  // The new token reads as the old one did.
  expect(
    (await getOk('/tenant/users', rotated.body.data.token)).body.data.map((user: { login: string }) => user.login),
  ).toContain(login);
});

test("a deleted tenant's token reads nothing (404), and a token of another kind is 403, on routes whose reads start beside the lookup", async () => {
  const client = await newClient();
  const tenant = await newTenant(client.token);
  expect((await api('GET', '/tenant/users', { token: client.token })).status).toBe(403);
  expect((await api('GET', '/tenants', { token: tenant.token })).status).toBe(403);
  expect((await api('DELETE', '/tenants', { token: client.token, body: { id: tenant.id } })).status).toBe(200);
  const outcomes: Outcome[] = [];
  await readUntil('/tenant/users', tenant.token, 4, outcomes, () => outcomes.length >= 12);
  expect(outcomes.map((outcome) => outcome.status)).toEqual(outcomes.map(() => 404));
});
