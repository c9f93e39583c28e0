/**
 * `npm run examples:record`: writes tools/openapi/answer-examples.json, the example of every 2xx JSON
 * answer of docs/openapi.json, from answers the tests really received. It runs a few connected test
 * files with ANSWER_EXAMPLES_FILE set (test/support/documented.ts then appends each 2xx JSON answer it
 * validated), picks one answer per operation and status, and makes it stable and safe: tokens,
 * login tokens, signing secrets, cursors and random ids become fixed placeholders of the same format,
 * ids are renumbered small (consistently within an answer), instants are moved to a fixed day, and
 * lists are cut to three items. Then `npm run docs` puts the examples in the document.
 */
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { format, resolveConfig } from 'prettier';
import { signedTokenPattern } from '#functions/core/auth/tokens.ts';
import { expectDocumented } from '#test/support/documented.ts';
import { openApiFile } from '#tools/openapi/openapi-file.ts';

export const answerExamplesFile = fileURLToPath(new URL('../tools/openapi/answer-examples.json', import.meta.url));

/**
 * Together these reach every 2xx JSON answer of the document (the walkthroughs of each area, the
 * integrator's events and the fleet's rollouts among them, plus opaque-values for a schedule's runs,
 * operations-views for one run and its retry, audit for the audit trail, and docs-page for the document itself), in about a
 * minute and a half.
 */
const recordedTestFiles = [
  'test/e2e/smoke.test.ts',
  'test/e2e/spec-letter.test.ts',
  'test/e2e/tenants.test.ts',
  'test/e2e/templates.test.ts',
  'test/e2e/datamarts.test.ts',
  'test/e2e/schedules.test.ts',
  'test/e2e/alerts.test.ts',
  'test/e2e/client-events.test.ts',
  'test/e2e/rollouts.test.ts',
  'test/e2e/sso.test.ts',
  'test/e2e/opaque-values.test.ts',
  'test/e2e/operations-views.test.ts',
  'test/e2e/audit.test.ts',
  'test/e2e/docs-page.test.ts',
];

/** Trims an answer too large to show whole: the document itself keeps its header and one path, without components. */
const trims: Readonly<Record<string, (body: Record<string, unknown>) => unknown>> = {
  'GET /openapi.json': ({ openapi, info, servers, tags, paths }) => {
    const { title, version, summary } = info as Record<string, unknown>;
    const health = (paths as Record<string, unknown>)['/health'];
    return { openapi, info: { title, version, summary }, servers, tags, paths: { '/health': health }, components: {} };
  },
};

const maxListItems = 3;

/** Fixed stand-ins, derived from a label so that they look like what they replace. */
const digest = (label: string, encoding: 'hex' | 'base64' | 'base64url', algorithm = 'sha256') =>
  createHash(algorithm).update(`answer example: ${label}`).digest(encoding);
/** The random part and the MAC of every token in the examples (43 base64url characters each, as a real token's). */
export const placeholderTokenRandom = digest('token random', 'base64url');
export const placeholderTokenMac = digest('token mac', 'base64url');
/** The signature of every login token in the examples (an ES256 signature's 86 base64url characters). */
export const placeholderJwtSignature = digest('login token signature', 'base64url', 'sha512');
/** The webhook signing secret of the examples (32 bytes in base64, as a real one). */
export const placeholderSigningSecret = `whsec_${digest('signing secret', 'base64')}`;
/** The `nextCursor` of every page in the examples: opaque to callers, base64url as a real one. */
const placeholderCursor = digest('cursor', 'base64url');

const uuidNumber = (n: number) => {
  const hex = digest(`uuid ${n}`, 'hex');
  const variant = '89ab'[Number.parseInt(hex[16] ?? '0', 16) % 4];
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-4${hex.slice(13, 16)}-${variant}${hex.slice(17, 20)}-${hex.slice(20, 32)}`;
};

const jwtPattern = /eyJ[\w-]*\.eyJ[\w-]*\.[\w-]+/g;
const jwtShape = /eyJ[\w-]*\.eyJ[\w-]*\./;
const anyTokenPattern = /\b(?:cli|ten|agt)_[\w.-]+/g;
const signingSecretPattern = /whsec_[A-Za-z0-9+/=]+/g;

/**
 * The strings of `text` that may be a real credential: a token other than the placeholder token of
 * its owner, a login token not signed with the placeholder signature, a signing secret other than
 * the placeholder.
 */
export function liveSecrets(text: string): string[] {
  const tokens = [...text.matchAll(anyTokenPattern)]
    .map(([token]) => token)
    .filter((token) => {
      const [, , , , random, mac] = signedTokenPattern.exec(token) ?? [];
      return random !== placeholderTokenRandom || mac !== placeholderTokenMac;
    });
  const jwts = [...text.matchAll(jwtPattern)].map(([jwt]) => jwt).filter((jwt) => jwt.split('.')[2] !== placeholderJwtSignature);
  const secrets = [...text.matchAll(signingSecretPattern)]
    .map(([secret]) => secret)
    .filter((s) => s !== placeholderSigningSecret);
  return [...tokens, ...jwts, ...secrets];
}

/** Which record an `id` is, by the property that holds the object (or the array of them). */
const holderKinds: Readonly<Record<string, string>> = {
  tenant: 'tenant',
  template: 'template',
  user: 'user',
  group: 'group',
  groups: 'group',
  table: 'table',
  tables: 'table',
  columns: 'column',
  desks: 'desk',
  applications: 'application',
  flows: 'flow',
  runs: 'run',
  alert: 'alert',
  header: 'schedule',
};
/** Which record a route's `data` is, by the last of these words in its path. */
const pathKinds: Readonly<Record<string, string>> = {
  tenants: 'tenant',
  tenant: 'tenant',
  templates: 'template',
  agents: 'agent',
  runs: 'run',
  users: 'user',
  groups: 'group',
  datamart: 'datamart',
  schedules: 'schedule',
  alerts: 'alert',
  deliveries: 'delivery',
  send: 'delivery',
  fire: 'delivery',
};
/** Arrays of bare ids. */
const idListKinds: Readonly<Record<string, string>> = { members: 'user' };

/** `tenantId` → tenant, `pendingTemplateId` → template, `flow_etl_id` → flow. */
function kindOfKey(key: string): string | undefined {
  if (key === 'flow_etl_id') return 'flow';
  const match = /^(?:pending)?([A-Za-z]+)Id$/.exec(key);
  return match?.[1] && match[1].charAt(0).toLowerCase() + match[1].slice(1);
}

const day = 86_400_000;
/** Where a recorded answer's clock readings move to (its earliest one), keeping their distances. */
const exampleInstant = Date.parse('2026-03-02T09:00:00.000Z');
const isoInstant = /\b(\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2})(\.\d+)?(Z|[+-]\d{2}:\d{2})/g;
const offsetMinutes = (zone: string) =>
  zone === 'Z' ? 0 : (zone.startsWith('-') ? -1 : 1) * (Number(zone.slice(1, 3)) * 60 + Number(zone.slice(4, 6)));

/** When the recording ran: instants inside it (and up to a year after, the schedules' fires) are the run's, not the tests' data. */
export interface RecordingWindow {
  start: number;
  end: number;
}

/**
 * One answer made stable and safe, in two passes over it: the first sees which ids and instants it
 * holds, the second rewrites them (ids by rank within their kind, so order and equality stay).
 */
class Scrubber {
  private readonly ids = new Map<string, Set<number>>();
  private readonly clock: number[] = [];
  private readonly randoms = new Map<string, string>();
  private rewriting = false;
  private shift = { clock: 0, aligned: 0 };

  constructor(
    private readonly dataKind: string | undefined,
    private readonly window: RecordingWindow,
  ) {}

  scrub(body: unknown): unknown {
    this.walk(body, undefined);
    const earliest = this.clock.length > 0 ? Math.min(...this.clock) : this.window.start;
    // Clock readings move to the example's instant; whole-minute instants (schedule fires) by whole days, keeping their time.
    this.shift = { clock: earliest - exampleInstant, aligned: Math.floor((earliest - exampleInstant) / day) * day };
    this.rewriting = true;
    return this.walk(body, undefined);
  }

  private id(kind: string | undefined, value: number): number {
    if (!kind || !Number.isSafeInteger(value)) return value;
    const seen = this.ids.get(kind) ?? new Set();
    this.ids.set(kind, seen);
    if (!this.rewriting) seen.add(value);
    return this.rewriting ? [...seen].sort((x, y) => x - y).indexOf(value) + 1 : value;
  }

  /** `clock`: a reading of the clock whatever its value (a login token's times, in whole seconds). */
  private instant(time: number, clock = false): number {
    const inRun = time >= this.window.start - 3_600_000 && time <= this.window.end + 366 * day;
    if (!inRun) return time;
    const aligned = !clock && time % 60_000 === 0;
    if (!this.rewriting && !aligned) this.clock.push(time);
    return time - (aligned ? this.shift.aligned : this.shift.clock);
  }

  /** The same fixed stand-in for each distinct random value, numbered in order of appearance. */
  private random(value: string, make: (n: number) => string): string {
    if (!this.rewriting) return value;
    let made = this.randoms.get(value);
    if (!made) {
      made = make(this.randoms.size + 1);
      this.randoms.set(value, made);
    }
    return made;
  }

  private walk(value: unknown, key: string | undefined): unknown {
    if (typeof value === 'string') return key === 'nextCursor' ? placeholderCursor : this.text(value);
    if (Array.isArray(value)) {
      const kept = value.slice(0, maxListItems);
      const listKind = key ? idListKinds[key] : undefined;
      return kept.map((item) => (typeof item === 'number' ? this.id(listKind, item) : this.walk(item, key)));
    }
    if (typeof value !== 'object' || value === null) return value;
    const kindOfId = key === 'data' ? this.dataKind : key ? holderKinds[key] : undefined;
    return Object.fromEntries(
      Object.entries(value).map(([name, child]) => {
        if (typeof child === 'number') return [name, this.id(name === 'id' ? kindOfId : kindOfKey(name), child)];
        return [name, this.walk(child, name)];
      }),
    );
  }

  private text(value: string): string {
    return (
      value
        .replace(jwtPattern, (jwt) => this.jwt(jwt))
        .replace(anyTokenPattern, (token) => this.token(token))
        .replace(signingSecretPattern, () => placeholderSigningSecret)
        // The twin's addresses: its webhook receivers, and the tenant domains with the port it listened on.
        .replace(/http:\/\/127\.0\.0\.1:\d+/g, 'https://hooks.example.com')
        .replace(/http:\/\/([\w-]+\.localhost):\d+/g, 'https://$1')
        .replace(/-(\d+)\.localhost\b/g, (_, id: string) => `-${this.id('tenant', Number(id))}.localhost`)
        .replace(/\b(tenant|client|agent):(\d+)\b/g, (_, kind: string, id: string) => `${kind}:${this.id(kind, Number(id))}`)
        .replace(/\bschedule-(\d+)\.yaml\b/g, (_, id: string) => `schedule-${this.id('schedule', Number(id))}.yaml`)
        .replace(/\b[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b/g, (uuid) => this.random(uuid, uuidNumber))
        .replace(/\bmsg_[0-9a-f]{32}\b/g, (id) => this.random(id, (n) => `msg_${digest(`webhook id ${n}`, 'hex').slice(0, 32)}`))
        .replace(isoInstant, (text, seconds: string, fraction: string | undefined, zone: string) => {
          const moved = this.instant(Date.parse(text));
          const local = new Date(moved + offsetMinutes(zone) * 60_000).toISOString();
          return `${local.slice(0, seconds.length)}${fraction === undefined ? '' : local.slice(19, 19 + fraction.length)}${zone}`;
        })
    );
  }

  /** A signed token: the placeholder of its kind and (renumbered) owner. */
  private token(token: string): string {
    const match = signedTokenPattern.exec(token);
    if (!match) return token;
    const [, prefix = '', , owner = ''] = match;
    const kinds = ['client', 'tenant', 'agent'];
    const ids = owner.split('-').map((id, index) => this.id(kinds[index], Number(id)));
    return `${prefix}_1.${ids.join('-')}.${placeholderTokenRandom}.${placeholderTokenMac}`;
  }

  /** A login token: its header and claims scrubbed like the answer, under the placeholder signature. */
  private jwt(jwt: string): string {
    const [header = '', payload = ''] = jwt.split('.');
    const part = (encoded: string, claims: (value: Record<string, unknown>) => Record<string, unknown>) =>
      Buffer.from(JSON.stringify(claims(JSON.parse(Buffer.from(encoded, 'base64url').toString('utf8')))), 'utf8').toString(
        'base64url',
      );
    const seconds = (value: unknown) => (typeof value === 'number' ? Math.floor(this.instant(value * 1000, true) / 1000) : value);
    const scrubbed = part(payload, (claims) => {
      const { tid, sub, iat, exp, iat_ms: iatMs } = claims;
      return {
        ...(this.walk(claims, undefined) as Record<string, unknown>),
        ...(typeof tid === 'number' ? { tid: this.id('tenant', tid) } : {}),
        ...(typeof sub === 'string' && /^\d+$/.test(sub) ? { sub: String(this.id('user', Number(sub))) } : {}),
        ...(typeof iatMs === 'number' ? { iat_ms: this.instant(iatMs, true) } : {}),
        ...(iat === undefined ? {} : { iat: seconds(iat) }),
        ...(exp === undefined ? {} : { exp: seconds(exp) }),
      };
    });
    return `${part(header, (fields) => this.walk(fields, undefined) as Record<string, unknown>)}.${scrubbed}.${placeholderJwtSignature}`;
  }
}

/** The record kind of a route's `data.id`. */
function dataKindOf(path: string): string | undefined {
  const words = path.split('/').filter((word) => word && !word.startsWith('{'));
  return words
    .map((word) => pathKinds[word])
    .filter(Boolean)
    .at(-1);
}

export interface RecordedAnswer {
  method: string;
  path: string;
  status: number;
  body: unknown;
}

const answerKey = ({ method, path, status }: Pick<RecordedAnswer, 'method' | 'path' | 'status'>) => `${method} ${path} ${status}`;

/** Values the scrubber replaces whole, whatever they hold. */
const replacedWhole = (value: string) =>
  jwtShape.test(value) ||
  /^(?:cli|ten|agt|whsec)_|^msg_[0-9a-f]{32}$|^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/.test(value);

/**
 * How much of a test's plumbing an answer shows rather than a caller's data: names with a random
 * suffix (`Keyed 43d8ec6b-…`, `keyed-1e050fd7`), one-letter names, control characters, long or
 * repetitive text (the size tests' `LLLL…`).
 */
function noise(value: unknown, key?: string): number {
  if (typeof value === 'string') {
    if (key === 'nextCursor' || replacedWhole(value)) return 0;
    const signs = [
      /[0-9a-f]{8}(?:-[0-9a-f]{4}-|\b)/.test(value),
      key === 'nome' && value.length < 3,
      // eslint-disable-next-line no-control-regex -- control characters are what is looked for
      /[\u0000-\u001f]/.test(value),
      value.length > 100 || /(.)\1{7}/.test(value),
    ];
    return signs.filter(Boolean).length;
  }
  if (typeof value !== 'object' || value === null) return 0;
  return Object.entries(value).reduce((sum: number, [name, child]) => sum + noise(child, Array.isArray(value) ? key : name), 0);
}

/** How much of its shape an answer shows: its distinct filled paths, and up to three items of each list. */
function richness(value: unknown, path = '', paths = new Set<string>()): number {
  let items = 0;
  if (Array.isArray(value)) {
    if (value.length > 0) paths.add(path);
    items += Math.min(value.length, maxListItems);
    for (const item of value) items += richness(item, `${path}[]`, paths);
  } else if (typeof value === 'object' && value !== null) {
    for (const [key, child] of Object.entries(value)) items += richness(child, `${path}.${key}`, paths);
  } else if (value !== null && value !== '') paths.add(path);
  return path === '' ? paths.size + items : items;
}

/** The example of one operation and status: the cleanest, fullest of its answers, scrubbed. */
function exampleOf(answers: readonly RecordedAnswer[], window: RecordingWindow): unknown {
  const candidates = answers.map((answer) => {
    const trim = trims[`${answer.method} ${answer.path}`];
    const body = trim ? trim(answer.body as Record<string, unknown>) : answer.body;
    const example = new Scrubber(dataKindOf(answer.path), window).scrub(body);
    // What the example shows counts: a little plumbing beside much data beats an empty list.
    return { example, text: JSON.stringify(example), score: richness(example) - 5 * noise(example) };
  });
  candidates.sort(
    (a, b) => b.score - a.score || a.text.length - b.text.length || (a.text < b.text ? -1 : a.text > b.text ? 1 : 0),
  );
  return candidates[0]?.example;
}

interface Document {
  paths: Record<string, Record<string, { responses: Record<string, { content?: Record<string, unknown> }> }>>;
}

/** `GET /tenant/users 200` of every 2xx JSON answer the document describes. */
export function jsonSuccessAnswers(document: Document): string[] {
  return Object.entries(document.paths).flatMap(([path, operations]) =>
    Object.entries(operations).flatMap(([method, { responses }]) =>
      Object.entries(responses)
        .filter(([status, response]) => /^2\d\d$/.test(status) && response.content?.['application/json'])
        .map(([status]) => answerKey({ method: method.toUpperCase(), path, status: Number(status) })),
    ),
  );
}

/** The examples file: by route key, then status, sorted, formatted as the repository formats JSON. */
export async function answerExamplesJson(answers: readonly RecordedAnswer[], window: RecordingWindow): Promise<string> {
  const document = JSON.parse(readFileSync(openApiFile, 'utf8')) as Document;
  const byKey = new Map<string, RecordedAnswer[]>();
  for (const answer of answers) {
    const group = byKey.get(answerKey(answer)) ?? [];
    group.push(answer);
    byKey.set(answerKey(answer), group);
  }
  const examples: Record<string, Record<string, unknown>> = {};
  const missing: string[] = [];
  for (const key of jsonSuccessAnswers(document).sort()) {
    const recorded = byKey.get(key);
    if (!recorded) {
      missing.push(key);
      continue;
    }
    const [method = '', path = '', status = ''] = key.split(' ');
    const example = exampleOf(recorded, window);
    // The scrubbed example still has to be what the document describes.
    expectDocumented(method, path.replace(/\{\w+\}/g, '1'), {
      status: Number(status),
      contentType: 'application/json',
      body: example,
    });
    (examples[`${method} ${path}`] ??= {})[status] = example;
  }
  if (missing.length > 0) throw new Error(`No recorded answer for:\n${missing.join('\n')}\nAdd a test file that reaches them.`);
  const text = await format(JSON.stringify(examples), {
    ...(await resolveConfig(answerExamplesFile)),
    filepath: answerExamplesFile,
  });
  const leaks = liveSecrets(text);
  if (leaks.length > 0) throw new Error(`Not scrubbed: ${leaks.join(', ')}`);
  return text;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const directory = mkdtempSync(join(tmpdir(), 'answer-examples-'));
  const file = join(directory, 'answers.ndjson');
  try {
    writeFileSync(file, '');
    const start = Date.now();
    const run = spawnSync('npx', ['vitest', 'run', '--project', 'connected', ...recordedTestFiles], {
      stdio: 'inherit',
      env: { ...process.env, ANSWER_EXAMPLES_FILE: file },
    });
    if (run.status !== 0) throw new Error(`The recording run failed (exit ${run.status ?? run.signal}): nothing written`);
    const answers = readFileSync(file, 'utf8')
      .split('\n')
      .filter(Boolean)
      .map((line) => JSON.parse(line) as RecordedAnswer);
    writeFileSync(answerExamplesFile, await answerExamplesJson(answers, { start, end: Date.now() }));
    console.log(`wrote ${answerExamplesFile} from ${answers.length} answers; now run npm run docs`);
  } finally {
    rmSync(directory, { recursive: true, force: true });
  }
}
