/**
 * Every route that stores a name that must be unique compares it as a reader sees it, through the
 * real routes: a name changed in a way no reader can see (test/support/unseen.ts) is never a second
 * one. Logins and template names, which take any visible text, answer such a change alike: taken
 * (409) when it folds onto the first, refused (400) when it holds what no name may (an invisible
 * format character). Agent names take only lower-case ASCII, so every such change is refused (400)
 * or taken (409), never created.
 */
import fc from 'fast-check';
import { beforeAll, describe, expect, test } from 'vitest';
import { api, newClient, newTenant } from '#test/support/api.ts';
import { retailBundle } from '#test/support/templates.ts';
import { unseen } from '#test/support/unseen.ts';

let client: { token: string };
let tenant: { token: string };
beforeAll(async () => {
  client = await newClient();
  tenant = await newTenant(client.token);
});

/** Each route that claims a unique name: creating `name` answers its status (and code). */
const claims = {
  login: (name: string) => api('POST', '/tenant/users', { token: tenant.token, body: { login: name, nome: 'Someone' } }),
  templateName: (name: string) =>
    api('POST', '/tenants/templates', { token: client.token, body: { ...retailBundle(), nome: name } }),
  agentName: (name: string) => api('POST', '/tenant/agents', { token: tenant.token, body: { nome: name } }),
};

const outcome = (answer: { status: number; body: { code?: string } }) =>
  answer.status === 201 ? 'created' : `${answer.status} ${answer.body.code}`;

/** A name a reader can tell from any other this run made: a fresh stem, then what the change works on. */
const names = fc.tuple(fc.stringMatching(/^[a-z][a-z0-9]{3,6}$/), fc.constantFrom('ss', 'fi', 's', '')).map(
  ([stem, tail]) =>
    `${stem}${crypto
      .randomUUID()
      .slice(0, 6)
      .replace(/[^a-z]/g, 'q')}${tail}`,
);

describe('unique names compare as a reader sees them, on every route that stores one', () => {
  test('a change no reader can see never makes a second login, template name or agent name', async () => {
    await fc.assert(
      fc.asyncProperty(names, fc.array(unseen, { minLength: 1, maxLength: 3 }), async (name, changes) => {
        const changed = changes.reduce((text, change) => change(text), name);
        fc.pre(changed !== name);
        const answers: Record<string, string> = {};
        for (const [route, claim] of Object.entries(claims)) {
          expect(outcome(await claim(name)), `${route} ${JSON.stringify(name)}`).toBe('created');
          answers[route] = outcome(await claim(changed));
        }
        const refusal = /^(409 (login_taken|template_name_taken|agent_name_taken)|400 validation_failed)$/;
        for (const [route, answer] of Object.entries(answers))
          expect(answer, `${route} ${JSON.stringify(changed)}`).toMatch(refusal);
        // The two routes that take any visible text answer the same change the same way.
        expect(answers.login?.split(' ')[0], JSON.stringify(changed)).toBe(answers.templateName?.split(' ')[0]);
      }),
      { seed: 41, numRuns: 10 },
    );
  }, 120_000);
});

/**
 * A name that folding makes long: U+FDFA is one character that folds to 18 (names.ts), so the most
 * characters a login or a template name may have (200) fold to 6,600 bytes, past DynamoDB's 1,024
 * for a sort key. Its claim is written as a digest of the folded text (store/entities.ts `writeKey`),
 * so every route that names it finds it, and a spelling that folds alike is still the same name.
 */
describe('a name that folds past the key size limit works on every route that names it', () => {
  const long = (first: string) => `${first}${'\ufdfa'.repeat(199)}`;

  test('a login of 200 characters, 199 folding to 18 each: created, found, logged in, and taken in any spelling that folds alike', async () => {
    const login = long('A');
    const created = await api('POST', '/tenant/users', { token: tenant.token, body: { login, nome: 'Long' } });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    const userId = created.body.data.id;
    for (const spelling of [login, long('a'), long('\uff21')]) {
      const found = await api('GET', `/tenant/users?login=${encodeURIComponent(spelling)}`, { token: tenant.token });
      expect(found.status, JSON.stringify(found.body)).toBe(200);
      expect(found.body.data.map((user: { id: number }) => user.id)).toEqual([userId]);
      const loggedIn = await api('POST', '/tenant/login', { token: tenant.token, body: { login: spelling } });
      expect(loggedIn.status, JSON.stringify(loggedIn.body)).toBe(200);
    }
    const again = await api('POST', '/tenant/users', { token: tenant.token, body: { login: long('a'), nome: 'Twin' } });
    expect(outcome(again)).toBe('409 login_taken');
    // Another long login is another user: digests of different folded texts differ. Renamed to the
    // first's, in another spelling, it is taken; to a third, its claim moves.
    const other = await claims.login(long('b'));
    expect(outcome(other)).toBe('created');
    const rename = (login: string) =>
      api('PATCH', `/tenant/users/${other.body.data.id}`, { token: tenant.token, body: { login } });
    expect(outcome(await rename(long('\uff41')))).toBe('409 login_taken');
    expect((await rename(long('c'))).status).toBe(200);
    expect(outcome(await claims.login(long('B')))).toBe('created');
  });

  test('a template name of 200 such characters: created, and taken in any spelling that folds alike', async () => {
    expect(outcome(await claims.templateName(long('R')))).toBe('created');
    expect(outcome(await claims.templateName(long('r')))).toBe('409 template_name_taken');
    expect(outcome(await claims.templateName(long('S')))).toBe('created');
  });
});
