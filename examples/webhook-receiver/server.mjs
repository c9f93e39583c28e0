// A receiver for the service's webhooks: checks where a request comes from, answers at once, then stores
// the payload. An alert's generated files are downloaded (their URLs are not permanent); an integrator's
// event (rollouts, failed applies and runs, missed schedules, disabled alert webhooks: docs/events.md) is
// handled by its type (events.mjs).
//
//   RECEIVER_PATH_SECRET=<hard to guess> WEBHOOK_SECRET=whsec_... node examples/webhook-receiver/server.mjs
//
// Environment: PORT (4000; 0 = any free port), RECEIVER_PATH_SECRET (required: the path is /<secret>),
// WEBHOOK_SECRET (optional whsec_...: verify the Standard Webhooks signature), STORE_DIR (./received).
import { createHash, timingSafeEqual } from 'node:crypto';
import { createWriteStream, existsSync } from 'node:fs';
import { mkdir, rename, rm, writeFile } from 'node:fs/promises';
import { createServer } from 'node:http';
import { extname, join, resolve } from 'node:path';
import { Readable, Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { Webhook } from 'standardwebhooks';
import { handleEvent, isEvent } from './events.mjs';

const port = Number(process.env.PORT || 4000);
const pathSecret = process.env.RECEIVER_PATH_SECRET;
const storeDir = resolve(process.env.STORE_DIR || './received');
const maxBodyBytes = 5 * 1024 * 1024;
const maxFileBytes = 50 * 1024 * 1024;
const downloadTimeoutMs = 60_000;
// The fields of `generated` that hold download URLs, by block type (text and ai blocks carry text only).
const downloadFields = { report: ['pdf', 'xlsx'], chart: ['url', 'chart'] };

// The secret goes into the URL as is, so it must not need encoding.
if (!pathSecret || !/^[\w.~-]+$/.test(pathSecret)) {
  console.error('RECEIVER_PATH_SECRET is required (letters, digits, _ . ~ -), e.g. RECEIVER_PATH_SECRET=$(openssl rand -hex 16)');
  process.exit(1);
}
let webhook = null;
try {
  webhook = process.env.WEBHOOK_SECRET ? new Webhook(process.env.WEBHOOK_SECRET) : null;
} catch (error) {
  console.error(`WEBHOOK_SECRET is not a valid whsec_ secret: ${error.message}`);
  process.exit(1);
}

// Ids already taken on by this process. The folder check below also covers ids stored before a restart.
const seen = new Set();

const server = createServer(async (request, response) => {
  const reply = (status) => response.writeHead(status).end();
  try {
    // Anything but POST /<secret> looks like a path that does not exist, to not reveal the real one.
    const { pathname } = new URL(request.url ?? '/', 'http://receiver');
    if (request.method !== 'POST' || !sameSecret(pathname, `/${pathSecret}`)) return reply(404);
    const body = await readBody(request);
    if (body === null) return response.writeHead(413, { connection: 'close' }).end();
    // The signature covers id, timestamp and the exact bytes received: verify before parsing anything.
    // verify() also rejects timestamps more than 5 minutes away (replays of an old captured request).
    if (webhook) {
      try {
        webhook.verify(body, request.headers, { jsonParse: false });
      } catch {
        return reply(401);
      }
    }
    let payload;
    try {
      payload = JSON.parse(body.toString('utf8'));
    } catch {
      return reply(400);
    }
    // The id names a folder: without a WEBHOOK_SECRET it is unchecked input, so keep it to safe characters.
    const id = request.headers['webhook-id'];
    if (typeof id !== 'string' || !/^[\w-]{1,128}$/.test(id)) return reply(400);
    // The service retries with the same webhook-id when it saw no 2xx (timeout, network): acknowledge
    // repeats but do the work once. Checked and marked before any await, so two concurrent copies can't both pass.
    if (seen.has(id) || existsSync(join(storeDir, id))) {
      console.log(`${id}: already received, skipped`);
      return reply(200);
    }
    seen.add(id);
    // Answer before downloading: the service waits only a few seconds and retries on a timeout.
    reply(200);
    (isEvent(payload) ? storeEvent(id, payload) : store(id, payload)).catch((error) =>
      console.error(`${id}: could not store: ${error.message}`),
    );
  } catch (error) {
    console.error(`request failed: ${error.message}`);
    if (!response.headersSent) reply(500);
  }
});

// A port already in use (or not allowed) ends the receiver at once, saying why: nothing would arrive otherwise.
server.on('error', (error) => {
  console.error(`Webhook receiver cannot listen on 127.0.0.1:${port}: ${error.message}. Set PORT to a free port.`);
  process.exit(1);
});
server.listen(port, '127.0.0.1', () => {
  console.log(`Webhook receiver listening on http://127.0.0.1:${server.address().port}/${pathSecret}`);
});

// Compares digests, which have the same length, so the time taken says nothing about the secret.
function sameSecret(a, b) {
  const digest = (text) => createHash('sha256').update(text).digest();
  return timingSafeEqual(digest(a), digest(b));
}

/** The request body, or null as soon as it passes maxBodyBytes (the 413 then closes the connection). */
function readBody(request) {
  return new Promise((done, fail) => {
    const chunks = [];
    let size = 0;
    request.on('data', (chunk) => {
      size += chunk.length;
      if (size > maxBodyBytes) done(null);
      else chunks.push(chunk);
    });
    request.on('end', () => done(Buffer.concat(chunks)));
    request.on('error', fail);
  });
}

/** An event: stored as it came, and handled by its type (events.mjs), once per webhook-id. */
async function storeEvent(id, event) {
  const folder = join(storeDir, id);
  await mkdir(folder, { recursive: true });
  await writeFile(join(folder, 'payload.json'), JSON.stringify(event, null, 2));
  console.log(`${id}: ${event.type}: ${handleEvent(event)}`);
}

async function store(id, payload) {
  const folder = join(storeDir, id);
  await mkdir(folder, { recursive: true });
  await writeFile(join(folder, 'payload.json'), JSON.stringify(payload, null, 2));
  console.log(`${id}: stored payload.json (alert ${payload?.alert?.id ?? '?'}, user ${payload?.user?.id ?? '?'})`);
  const blocks = Array.isArray(payload?.content) ? payload.content : [];
  const downloads = blocks.flatMap((block, index) =>
    (downloadFields[block?.type] ?? [])
      .filter((field) => typeof block.generated?.[field] === 'string')
      .map((field) => ({ url: block.generated[field], name: `${index}-${field}`, format: block.generated.format })),
  );
  // One failure is logged and does not stop the others.
  await Promise.all(
    downloads.map(async ({ url, name, format }) => {
      try {
        const file = `${name}${extension(url, format)}`;
        const size = await download(url, join(folder, file));
        console.log(`${id}: stored ${file} (${size} bytes)`);
      } catch (error) {
        console.error(`${id}: download of ${name} failed: ${error.message}`);
      }
    }),
  );
}

// The extension of the URL's path (or a dashboard's format), kept only if it is plainly an extension.
function extension(url, format) {
  const fromPath = extname(new URL(url).pathname);
  const candidate = fromPath || (typeof format === 'string' ? `.${format}` : '');
  return /^\.[A-Za-z0-9]{1,8}$/.test(candidate) ? candidate.toLowerCase() : '';
}

/** Downloads into `<file>.part` and renames it when complete, so a file that exists is whole. */
async function download(url, file) {
  const { protocol } = new URL(url);
  if (protocol !== 'http:' && protocol !== 'https:') throw new Error(`unsupported protocol ${protocol}`);
  // The timeout covers the whole transfer, body included.
  const response = await fetch(url, { signal: AbortSignal.timeout(downloadTimeoutMs) });
  if (!response.ok || !response.body) throw new Error(`HTTP ${response.status}`);
  if (Number(response.headers.get('content-length')) > maxFileBytes) throw new Error('larger than 50 MB');
  let size = 0;
  const limit = new Transform({
    transform(chunk, _encoding, next) {
      size += chunk.length;
      next(size > maxFileBytes ? new Error('larger than 50 MB') : null, chunk);
    },
  });
  try {
    await pipeline(Readable.fromWeb(response.body), limit, createWriteStream(`${file}.part`));
    await rename(`${file}.part`, file);
    return size;
  } catch (error) {
    await rm(`${file}.part`, { force: true });
    throw error;
  }
}
