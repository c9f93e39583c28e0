/**
 * The crash an outside reviewer made, through the real process: `npm start` on a data folder of its
 * own, a burst of tenant creations with templates (each with its Idempotency-Key), SIGKILL to the
 * whole process group (the twin and its DynamoDB Local) part-way through, a restart on the same
 * data, and every request sent again with its key, as a client whose answer was lost would. Each
 * tenant must then exist exactly once, with its template applied and a token that works, and the
 * requests answered before the kill must get the same answer again.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, expect, test } from 'vitest';
import { each } from '#test/support/each.ts';
import { killGroup, startTwinProcess, type TwinProcess } from '#test/support/processes.ts';
import { retailBundle } from '#test/support/templates.ts';

const scratch = mkdtempSync(join(tmpdir(), 'kill-restart-'));
const running: TwinProcess[] = [];
afterAll(async () => {
  running.forEach(killGroup);
  rmSync(scratch, { recursive: true, force: true });
});

const clientToken = `cli_kill_${crypto.randomUUID()}`;
const burst = 30;
const answeredBeforeKill = 8;
const burstId = crypto.randomUUID();
/** Creation `index`'s Idempotency-Key, the same on every try. */
const keyOf = (index: number) => `${burstId}-${index}`;
/**
 * Requests in flight at once, as a client with a connection pool sends them. The twin runs every
 * invocation in one process (Lambda gives each its own environment), so a creation's time there
 * grows with the number in flight: 30 at once took 4 to 7 s here, and over the functions' 15 s
 * timeout (a 500) on a loaded CI machine; 10 at once take about 2 s.
 */
const inFlight = 10;

interface Answer {
  status: number;
  headers: Headers;
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- JSON answers
  body: any;
}

async function request(url: string, method: string, path: string, token: string, body?: unknown, headers = {}) {
  const response = await fetch(`${url}${path}`, {
    method,
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', ...headers },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  return { status: response.status, headers: response.headers, body: await response.json() } as Answer;
}

const start = async () => {
  const twin = await startTwinProcess([], { DATA_DIR: join(scratch, 'data'), LOCAL_CLIENT_TOKEN: clientToken }, true);
  running.push(twin);
  return twin;
};

/** The lines of the twin's output that report a failure (what a 500 was). */
const failures = (twin: TwinProcess) =>
  twin
    .output()
    .split('\n')
    .filter((line) => /failed|error/i.test(line))
    .slice(0, 20)
    .join('\n');

/** Sends the creation until it is answered for good: a 409 with Retry-After (the killed attempt's claim, until its deadline) is waited out. */
async function createUntilAnswered(url: string, index: number, key: string, templateId: number): Promise<Answer> {
  const body = { nome: `Burst ${index}`, ativo: true, templateId };
  for (let attempt = 0; attempt < 30; attempt++) {
    const answer = await request(url, 'POST', '/tenants', clientToken, body, { 'idempotency-key': key });
    if (answer.status !== 409 || answer.body.code !== 'idempotency_key_in_progress') return answer;
    const seconds = Number(answer.headers.get('retry-after') ?? '1');
    await new Promise((resolve) => setTimeout(resolve, Math.min(seconds, 16) * 1000));
  }
  throw new Error(`Creation ${index} was still in progress after 30 tries`);
}

test('SIGKILL part-way through a burst of creations, restart, retry each with its key: every tenant once, whole', async () => {
  const first = await start();
  const published = await request(first.url, 'POST', '/tenants/templates', clientToken, retailBundle());
  const templateId = published.body.data.id as number;

  const answered = new Map<number, Answer>();
  const burstSent = each(
    burst,
    (index) =>
      request(
        first.url,
        'POST',
        '/tenants',
        clientToken,
        { nome: `Burst ${index}`, ativo: true, templateId },
        { 'idempotency-key': keyOf(index) },
      )
        .then((answer) => answered.set(index, answer))
        .catch(() => undefined),
    inFlight,
  );
  while (answered.size < answeredBeforeKill) await new Promise((resolve) => setTimeout(resolve, 5));
  killGroup(first);
  await burstSent;
  const beforeKill = new Map([...answered].filter(([, answer]) => answer.status === 201));
  const others = [...answered.values()].filter((answer) => answer.status !== 201);
  expect(
    beforeKill.size,
    `answers other than 201: ${JSON.stringify(others.map(({ status, body }) => ({ status, body })))}\n${failures(first)}`,
  ).toBeGreaterThanOrEqual(answeredBeforeKill);
  expect(beforeKill.size).toBeLessThan(burst);

  const second = await start();
  const retried = await each(burst, (index) => createUntilAnswered(second.url, index, keyOf(index), templateId), inFlight);
  expect(retried.map((answer) => answer.status)).toEqual(Array(burst).fill(201));
  for (const [index, answer] of beforeKill) expect(retried[index]?.body.data).toEqual(answer.body.data);

  const listed = await request(second.url, 'GET', '/tenants?limit=100', clientToken);
  const names = listed.body.data.map((tenant: { nome: string }) => tenant.nome).sort();
  expect(names).toEqual(Array.from({ length: burst }, (_, index) => `Burst ${index}`).sort());
  for (const answer of retried) {
    const own = await request(second.url, 'GET', '/tenant', answer.body.data.token);
    expect(own.status).toBe(200);
    expect(own.body.data).toMatchObject({ pendingTemplateId: null, template: { id: templateId, version: 1 } });
    expect(own.body.data.flows).toHaveLength(retailBundle().flows?.length ?? 0);
  }
  second.child.kill('SIGTERM');
  await second.exited;
}, 240_000);
