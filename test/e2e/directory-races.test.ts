/**
 * Races over real HTTP on users, groups and their permission records (docs/architecture.md, Crash
 * and race safety): a rename and a deletion of one user at once, and permission replaces racing the
 * deletion of their user or group. Whatever wins, nothing is left behind: no login claim naming a
 * user who is gone, no permission record of a user or group that is gone.
 */
import { describe, expect, test } from 'vitest';
import { listDatamartPermissions, listIndexedPermissions } from '#functions/core/datamarts/datamart-repository.ts';
import { findUser } from '#functions/core/directory/directory-repository.ts';
import { getItem } from '#functions/core/store/dynamo.ts';
import * as stored from '#functions/core/store/entity-declarations.ts';
import { api, newClient, newTenant } from '#test/support/api.ts';
import { tablePermission } from '#test/support/permissions.ts';
import { publish, retailBundle } from '#test/support/templates.ts';

const json = (token: string, body?: unknown) => ({ token, body });
const at = <T>(count: number, make: (index: number) => Promise<T>) =>
  Promise.all(Array.from({ length: count }, (_, index) => make(index)));
/** Rounds one after another (each round's requests at once), as a client racing itself would send them. */
async function inTurn<T>(count: number, round: (index: number) => Promise<T>): Promise<T[]> {
  const results: T[] = [];
  for (let index = 0; index < count; index++) results.push(await round(index));
  return results;
}

/** A tenant with the retail template, a datamart over its tables, and those tables' ids. */
async function datamartTenant() {
  const client = await newClient();
  const templateId = await publish(client.token, retailBundle());
  const tenant = await newTenant(client.token, { templateId });
  const own = (await api('GET', '/tenant', { token: tenant.token })).body.data;
  const tables = (own.desks[0].tables as Array<{ id: number }>).map((table) => table.id);
  const datamart = (await api('POST', '/tenant/datamart', json(tenant.token, { nome: 'Sales', tables, owners: [] }))).body.data;
  return { tenant, tables, datamartId: datamart.id as number };
}

describe('a rename and a deletion of the same user at once', () => {
  test('40 rounds: the login claims left name live users only, and both logins are free again', async () => {
    const client = await newClient();
    const tenant = await newTenant(client.token);
    const rounds = 40;
    const outcomes = await inTurn(rounds, async (round) => {
      const created = await api('POST', '/tenant/users', json(tenant.token, { login: `old${round}`, nome: 'U' }));
      expect(created.status).toBe(201);
      const id = created.body.data.id as number;
      const [renamed, deleted] = await Promise.all([
        api('PATCH', `/tenant/users/${id}`, json(tenant.token, { login: `new${round}` })),
        api('DELETE', `/tenant/users/${id}`, { token: tenant.token }),
      ]);
      // The deletion always wins in the end; the rename either went first or found the user gone (or changing).
      expect(deleted.status).toBe(200);
      expect([200, 404, 409]).toContain(renamed.status);
      const claims = await Promise.all(
        [`old${round}`, `new${round}`].map(async (login) => {
          const holder = (await getItem<{ userId: number }>(stored.userLogin.key({ tenantId: tenant.id, login })))?.userId;
          return { login, holder, live: holder === undefined ? undefined : Boolean(await findUser(tenant.id, holder)) };
        }),
      );
      return { round, renamed: renamed.status, claims };
    });
    // No claim is left naming a user who is gone (before the fix: LOGIN#new<n> did, in about half the rounds).
    const leftBehind = outcomes.flatMap((outcome) => outcome.claims.filter((claim) => claim.holder !== undefined));
    expect(leftBehind).toEqual([]);
    // Both logins can be taken again.
    const again = await at(rounds, (round) =>
      Promise.all([
        api('POST', '/tenant/users', json(tenant.token, { login: `new${round}`, nome: 'Again' })),
        api('POST', '/tenant/users', json(tenant.token, { login: `old${round}`, nome: 'Again' })),
      ]),
    );
    expect(again.flat().map((answer) => answer.status)).toEqual(Array(rounds * 2).fill(201));
    // Some rounds renamed before the deletion: the race was run, not avoided.
    expect(outcomes.some((outcome) => outcome.renamed === 200)).toBe(true);
  }, 120_000);
});

describe('permission replaces racing the deletion of their subject', () => {
  test.each(['user', 'group'] as const)(
    '15 PUTs of a %s’s records with its DELETE among them, 8 rounds: no record outlives the subject',
    async (subject) => {
      const { tenant, tables, datamartId } = await datamartTenant();
      const path = subject === 'user' ? '/tenant/users' : '/tenant/groups';
      const rounds = 8;
      const leftovers = await inTurn(rounds, async (round) => {
        const body = subject === 'user' ? { login: `s${round}`, nome: 'S' } : { nome: `G${round}` };
        const subjectId = (await api('POST', path, json(tenant.token, body))).body.data.id as number;
        const permissions = tables.map((tableId) => tablePermission(tableId, { allow_export: round % 2 === 0 }));
        const answers = await at(16, (index) =>
          index === 8
            ? api('DELETE', `${path}/${subjectId}`, { token: tenant.token })
            : api('PUT', `/tenant/datamart/${datamartId}/${subject}/${subjectId}`, json(tenant.token, { permissions })),
        );
        expect(answers[8]?.status).toBe(200);
        expect(answers.every((answer) => answer.status === 200 || answer.status === 404)).toBe(true);
        const [inCollection, inIndex] = await Promise.all([
          listDatamartPermissions(tenant.id, datamartId, subject, subjectId),
          listIndexedPermissions(tenant.id, subject, subjectId),
        ]);
        return [...inCollection, ...inIndex].map((record) => record.sk);
      });
      expect(leftovers.flat()).toEqual([]);
    },
    120_000,
  );
});
