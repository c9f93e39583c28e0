import { type ChildProcess, spawn } from 'node:child_process';
import { randomBytes, randomUUID } from 'node:crypto';
import { once } from 'node:events';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { createServer } from 'node:http';
import { type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { projectRoot } from '#test/support/processes.ts';
import { clientEventExamples } from '#tools/openapi/examples.ts';

// examples/webhook-receiver/server.mjs as its own process, fed signed webhooks; its downloads come from a
// local file server that counts requests and can hold an answer back.
const scratch = mkdtempSync(join(tmpdir(), 'webhook-receiver-'));
const storeDir = join(scratch, 'received');
const pathSecret = randomBytes(16).toString('hex');
const secret = `whsec_${randomBytes(24).toString('base64')}`;

interface ServedFile {
  body: string;
  delayMs?: number;
}
const files = new Map<string, ServedFile>();
const hits = new Map<string, number>();
const fileServer = createServer((request, response) => {
  const path = request.url ?? '/';
  hits.set(path, (hits.get(path) ?? 0) + 1);
  const file = files.get(path);
  if (!file) return void response.writeHead(404).end();
  setTimeout(() => response.end(file.body), file.delayMs ?? 0);
});
let filesUrl = '';

interface Receiver {
  child: ChildProcess;
  url: string;
  output: () => string;
}

function spawnReceiver(env: Record<string, string | undefined>) {
  const child = spawn(process.execPath, ['examples/webhook-receiver/server.mjs'], {
    cwd: projectRoot,
    env: { ...process.env, PORT: '0', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout.on('data', (chunk) => (output += chunk));
  child.stderr.on('data', (chunk) => (output += chunk));
  return { child, output: () => output, exited: once(child, 'exit').then(([code]) => code as number | null) };
}

async function startReceiver(): Promise<Receiver> {
  const started = spawnReceiver({ RECEIVER_PATH_SECRET: pathSecret, WEBHOOK_SECRET: secret, STORE_DIR: storeDir });
  const deadline = Date.now() + 10_000;
  for (;;) {
    const url = /Webhook receiver listening on (\S+)/.exec(started.output())?.[1];
    if (url) return { ...started, url };
    if (started.child.exitCode !== null || Date.now() > deadline) throw new Error(`No receiver:\n${started.output()}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

async function stopReceiver(receiver: Receiver | undefined) {
  if (!receiver || receiver.child.exitCode !== null) return;
  const exited = once(receiver.child, 'exit');
  receiver.child.kill('SIGTERM');
  await exited;
}

let receiver: Receiver | undefined;
beforeAll(async () => {
  fileServer.listen(0, '127.0.0.1');
  await once(fileServer, 'listening');
  filesUrl = `http://127.0.0.1:${(fileServer.address() as AddressInfo).port}`;
  receiver = await startReceiver();
});
afterAll(async () => {
  await stopReceiver(receiver);
  fileServer.close();
  rmSync(scratch, { recursive: true, force: true });
});

const newId = () => `msg_${randomUUID().replaceAll('-', '')}`;

/** Serves `body` at a fresh path of the file server and returns its URL. */
function serve(name: string, body: string, delayMs?: number) {
  const path = `/${randomUUID()}/${name}`;
  files.set(path, { body, delayMs });
  return `${filesUrl}${path}`;
}
const hitsOf = (url: string) => hits.get(new URL(url).pathname) ?? 0;

function alertBody(content: unknown[]) {
  return {
    alert: { nome: 'Daily sales', id: 3 },
    user: { id: 7, email: 'ana@x.com' },
    content,
    timestamp: '2026-11-22T10:00:00.000Z',
  };
}

/** POSTs a webhook as the service does, signed with `signWith`. */
function deliver(body: unknown, options: { id?: string; signWith?: string; url?: string } = {}) {
  const { id = newId(), signWith = secret, url = receiver?.url ?? '' } = options;
  const payload = JSON.stringify(body);
  const now = new Date();
  return fetch(url, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      'user-agent': 'Service-Alert-Webhook/1.0',
      'webhook-id': id,
      'webhook-timestamp': String(Math.floor(now.getTime() / 1000)),
      'webhook-signature': new Webhook(signWith).sign(id, now, payload),
    },
    body: payload,
  });
}

const stored = (id: string) => (existsSync(join(storeDir, id)) ? readdirSync(join(storeDir, id)).sort() : []);
const readStored = (id: string, file: string) => readFileSync(join(storeDir, id, file), 'utf8');

describe('examples/webhook-receiver', () => {
  test('refuses to start without RECEIVER_PATH_SECRET, in one line', async () => {
    const started = spawnReceiver({ RECEIVER_PATH_SECRET: undefined, STORE_DIR: storeDir });
    expect(await started.exited).toBe(1);
    expect(started.output().trim().split('\n')).toEqual([expect.stringContaining('RECEIVER_PATH_SECRET is required')]);
  });

  test('a port already taken ends it at once, in one line that says so', async () => {
    const taken = createServer();
    await new Promise<void>((resolve) => taken.listen(0, '127.0.0.1', resolve));
    try {
      const port = String((taken.address() as AddressInfo).port);
      const started = spawnReceiver({ RECEIVER_PATH_SECRET: pathSecret, STORE_DIR: storeDir, PORT: port });
      expect(await started.exited).toBe(1);
      expect(started.output().trim().split('\n')).toEqual([expect.stringContaining(`cannot listen on 127.0.0.1:${port}`)]);
    } finally {
      taken.close();
    }
  });

  test('a wrong path, or another method on the right one, gets a bare 404', async () => {
    const origin = new URL(receiver?.url ?? '').origin;
    for (const response of [
      await deliver(alertBody([]), { url: `${origin}/not-the-secret` }),
      await deliver(alertBody([]), { url: `${origin}/${pathSecret}/extra` }),
      await fetch(receiver?.url ?? ''),
    ]) {
      expect(response.status).toBe(404);
      expect(await response.text()).toBe('');
    }
  });

  test('a signed webhook gets 200 before the downloads end, then the payload and every file are stored', async () => {
    const id = newId();
    const body = alertBody([
      { type: 'text', nome: 'Intro', generated: { text: 'Hello' } },
      { type: 'ai', nome: 'Summary', generated: { text: 'Sales went up' } },
      {
        type: 'report',
        nome: 'Sales',
        generated: { pdf: serve('r.pdf', 'PDF bytes', 1_500), xlsx: serve('r.xlsx', 'XLSX bytes') },
      },
      { type: 'chart', nome: 'Trend', generated: { kind: 'dashboard', url: serve('d', 'dashboard PNG'), format: 'png' } },
      { type: 'chart', nome: 'Bars', generated: { chart: serve('c.png', 'chart PNG') } },
    ]);

    const response = await deliver(body, { id });
    expect(response.status).toBe(200);
    // The file server holds the PDF back for 1.5 s: the 200 did not wait for it.
    expect(existsSync(join(storeDir, id, '2-pdf.pdf'))).toBe(false);

    await expect
      .poll(() => stored(id), { timeout: 10_000 })
      .toEqual(['2-pdf.pdf', '2-xlsx.xlsx', '3-url.png', '4-chart.png', 'payload.json']);
    expect(JSON.parse(readStored(id, 'payload.json'))).toEqual(body);
    expect(readStored(id, '2-pdf.pdf')).toBe('PDF bytes');
    expect(readStored(id, '2-xlsx.xlsx')).toBe('XLSX bytes');
    expect(readStored(id, '3-url.png')).toBe('dashboard PNG');
    expect(readStored(id, '4-chart.png')).toBe('chart PNG');
  });

  test('a signature made with another secret, or none, gets 401 and nothing is stored or downloaded', async () => {
    const pdf = serve('r.pdf', 'PDF bytes');
    const body = alertBody([{ type: 'report', nome: 'Sales', generated: { pdf } }]);
    const id = newId();
    const otherSecret = `whsec_${randomBytes(24).toString('base64')}`;
    expect((await deliver(body, { id, signWith: otherSecret })).status).toBe(401);
    const unsigned = await fetch(receiver?.url ?? '', {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'webhook-id': id },
      body: JSON.stringify(body),
    });
    expect(unsigned.status).toBe(401);
    expect(existsSync(join(storeDir, id))).toBe(false);
    expect(hitsOf(pdf)).toBe(0);
  });

  test('a signed body that is not JSON gets 400', async () => {
    const id = newId();
    const now = new Date();
    const response = await fetch(receiver?.url ?? '', {
      method: 'POST',
      headers: {
        'webhook-id': id,
        'webhook-timestamp': String(Math.floor(now.getTime() / 1000)),
        'webhook-signature': new Webhook(secret).sign(id, now, '{not json'),
      },
      body: '{not json',
    });
    expect(response.status).toBe(400);
  });

  test('the same webhook-id twice (and again after a restart) is acknowledged each time and downloaded once', async () => {
    const id = newId();
    const pdf = serve('r.pdf', 'PDF bytes', 300);
    const body = alertBody([{ type: 'report', nome: 'Sales', generated: { pdf } }]);
    expect((await deliver(body, { id })).status).toBe(200);
    // A retry while the first delivery is still downloading.
    expect((await deliver(body, { id })).status).toBe(200);
    await expect.poll(() => stored(id), { timeout: 10_000 }).toEqual(['0-pdf.pdf', 'payload.json']);
    // The receiver decides before answering, so once it logged the skip no download can follow.
    await expect.poll(() => receiver?.output() ?? '').toContain(`${id}: already received, skipped`);
    expect(hitsOf(pdf)).toBe(1);

    // A new process knows the id from its folder in STORE_DIR.
    await stopReceiver(receiver);
    receiver = await startReceiver();
    expect((await deliver(body, { id })).status).toBe(200);
    await expect.poll(() => receiver?.output() ?? '').toContain(`${id}: already received, skipped`);
    expect(hitsOf(pdf)).toBe(1);
  });

  test('a download that fails is logged and does not stop the others', async () => {
    const id = newId();
    const missing = `${filesUrl}/${randomUUID()}/gone.pdf`;
    const body = alertBody([
      { type: 'report', nome: 'Sales', generated: { pdf: missing, xlsx: serve('r.xlsx', 'XLSX bytes') } },
      { type: 'chart', nome: 'Bars', generated: { chart: serve('c.png', 'chart PNG') } },
    ]);
    expect((await deliver(body, { id })).status).toBe(200);
    await expect.poll(() => stored(id), { timeout: 10_000 }).toEqual(['0-xlsx.xlsx', '1-chart.png', 'payload.json']);
    await expect.poll(() => receiver?.output() ?? '').toContain(`${id}: download of 0-pdf failed: HTTP 404`);
    expect(hitsOf(missing)).toBe(1);
    expect(readStored(id, '1-chart.png')).toBe('chart PNG');
  });

  test("the integrator's events: each signed one stored and handled by its type, an unknown type acknowledged and ignored", async () => {
    const events = Object.values(clientEventExamples) as Array<{ type: string }>;
    const ids = events.map(() => newId());
    for (const [index, event] of events.entries()) {
      expect((await deliver(event, { id: ids[index] as string })).status).toBe(200);
    }
    const output = () => receiver?.output() ?? '';
    for (const [index, event] of events.entries()) {
      const id = ids[index] as string;
      // Logged once its payload is written.
      await expect.poll(output, { timeout: 10_000 }).toContain(`${id}: ${event.type}: `);
      expect(stored(id)).toEqual(['payload.json']);
      expect(JSON.parse(readStored(id, 'payload.json'))).toEqual(event);
    }
    expect(output()).toContain(`${ids[4]}: run.failed: tenant 42: run 118 (flow 7, agent 1) failed: Connection refused`);
    expect(output()).toContain(`${ids[0]}: rollout.wave_finished: rollout 3 of template 1: wave 1 of 5 done`);
    expect(output()).toContain(`${ids[5]}: schedule.missed: tenant 42: schedule 3 missed its slot`);
    expect(output()).toContain(`${ids[6]}: webhook.endpoint_disabled: tenant 42: its alert webhook was disabled (gone)`);
    const unknown = newId();
    expect(
      (await deliver({ type: 'tenant.renamed', timestamp: '2026-11-22T10:00:00.000Z', data: {} }, { id: unknown })).status,
    ).toBe(200);
    await expect.poll(output).toContain(`${unknown}: tenant.renamed: an event of a type this receiver does not know`);
  });
});
