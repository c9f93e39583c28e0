// SSRF-safe HTTP POST for alert webhooks: the URL is checked, its host resolved once, every
// resolved address checked, and the connection made to exactly the checked address (no second
// lookup, so DNS rebinding between check and connect is not possible). TLS still verifies the
// certificate against the URL's host name. Network problems are returned, never thrown. The
// outcome is the status line: once it is in, the time-out no longer applies, and the body is read
// only for a short, bounded time and size, then the connection is dropped.
import dns from 'node:dns';
import http from 'node:http';
import https from 'node:https';
import net, { type LookupFunction } from 'node:net';
import ipaddr from 'ipaddr.js';

export type Resolver = (hostname: string) => Promise<Array<{ address: string; family: number }>>;

export interface PostOptions {
  url: string;
  headers: Record<string, string>;
  body: string | Buffer;
  /** Time for DNS, connect, and the status line and headers of the answer; default 10 000 ms. */
  timeoutMs?: number;
  /** Also allows loopback addresses (127.0.0.0/8, ::1), `localhost` names and `http:` URLs; default false. */
  allowLoopback?: boolean;
  /** Default: `dns.promises.lookup(host, { all: true, verbatim: true })`. */
  resolve?: Resolver;
  /** How much of the answer's body is read and returned; default 1 024 bytes. The rest is never read. */
  maxResponseBytes?: number;
  /** How long the body is read once the status line is in; default 1 000 ms. The status stands whatever the body does. */
  bodyTimeoutMs?: number;
}

export type PostResult =
  | {
      kind: 'response';
      status: number;
      headers: Record<string, string | string[] | undefined>;
      /** The first bytes of the body (at most `maxResponseBytes`) that came within `bodyTimeoutMs`. */
      body: Buffer;
      durationMs: number;
    }
  | {
      kind: 'error';
      error: 'invalid_url' | 'dns_failed' | 'refused_address' | 'timeout' | 'connection_failed';
      message: string;
      durationMs: number;
    };

type ErrorKind = Extract<PostResult, { kind: 'error' }>['error'];

const maxUrlLength = 2048;
const defaultTimeoutMs = 10_000;
const defaultMaxResponseBytes = 1024;
const defaultBodyTimeoutMs = 1000;

/** Readable names for ipaddr.js range names, for messages. */
const rangeDescriptions: Record<string, string> = {
  unspecified: 'an unspecified address',
  broadcast: 'a broadcast address',
  multicast: 'a multicast address',
  linkLocal: 'a link-local address',
  loopback: 'a loopback address',
  carrierGradeNat: 'a carrier-grade NAT address',
  private: 'a private address',
  uniqueLocal: 'a private address',
  reserved: 'a reserved address',
};

const defaultResolver: Resolver = async (hostname) => dns.promises.lookup(hostname, { all: true, verbatim: true });

/** The check behind `isAllowedAddress`: undefined when allowed, else a description of what the address is. */
function addressProblem(address: string, allowLoopback: boolean): string | undefined {
  // Strict text forms only (what getaddrinfo and URL produce): ipaddr.js would also read forms such as
  // "010.0.0.1" as octal, which other parsers read differently.
  if (net.isIP(address) === 0 || !ipaddr.isValid(address)) return 'not an IP address';
  const parsed = ipaddr.parse(address);
  if (parsed.kind() === 'ipv4') return ipv4Problem(parsed as ipaddr.IPv4, allowLoopback);
  const v6 = parsed as ipaddr.IPv6;
  const range = v6.range();
  if (range === 'ipv4Mapped') return ipv4Problem(v6.toIPv4Address(), allowLoopback);
  if (range === 'rfc6052') {
    // Only the well-known NAT64 prefix 64:ff9b::/96 embeds an IPv4 address in its last 32 bits;
    // the local-use 64:ff9b:1::/48 (also 'rfc6052' to ipaddr.js) is refused.
    const [, , p2, p3, p4, p5, p6, p7] = v6.parts;
    if (p2 !== 0 || p3 !== 0 || p4 !== 0 || p5 !== 0 || p6 === undefined || p7 === undefined) return 'a NAT64 address';
    const embedded = new ipaddr.IPv4([p6 >> 8, p6 & 0xff, p7 >> 8, p7 & 0xff]);
    // Loopback behind NAT64 is not this host's loopback: never allowed.
    return ipv4Problem(embedded, false);
  }
  if (range === 'loopback') return allowLoopback ? undefined : describe(range);
  // ipaddr.js calls everything outside its special ranges 'unicast', including the deprecated
  // IPv4-compatible ::/96 (e.g. ::7f00:1); only global unicast 2000::/3 is public.
  if (range === 'unicast' && v6.match(ipaddr.IPv6.parse('2000::'), 3)) return undefined;
  return describe(range);
}

function ipv4Problem(address: ipaddr.IPv4, allowLoopback: boolean): string | undefined {
  const range = address.range();
  if (range === 'unicast' || (range === 'loopback' && allowLoopback)) return undefined;
  return describe(range);
}

function describe(range: string): string {
  return rangeDescriptions[range] ?? `a non-public address (${range})`;
}

/** Whether an address (v4 or v6 text) may be connected to under the rules above. */
export function isAllowedAddress(address: string, options: { allowLoopback: boolean }): boolean {
  return addressProblem(address, options.allowLoopback) === undefined;
}

type Checked =
  | { ok: true; url: URL; hostname: string; literal: boolean }
  | { ok: false; error: Extract<ErrorKind, 'invalid_url' | 'refused_address'>; message: string };

/** Rule 1 (URL shape), and rule 3 for IP-literal hosts and `localhost` names; no DNS. */
function checkUrl(raw: string, allowLoopback: boolean): Checked {
  const invalid = (message: string): Checked => ({ ok: false, error: 'invalid_url', message });
  if (raw.length > maxUrlLength) return invalid(`must be at most ${maxUrlLength} characters`);
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return invalid('is not a valid URL');
  }
  if (url.href.length > maxUrlLength) return invalid(`must be at most ${maxUrlLength} characters`);
  if (url.protocol !== 'https:' && !(url.protocol === 'http:' && allowLoopback)) {
    return invalid(allowLoopback ? 'must use http or https' : 'must use https');
  }
  if (url.username !== '' || url.password !== '') return invalid('must not contain user info');
  // An empty fragment ("…/#") leaves `hash` empty but still shows in `href`; '#' appears nowhere else in it.
  if (url.hash !== '' || url.href.includes('#')) return invalid('must not contain a fragment');
  if (url.hostname === '') return invalid('must have a host');

  const bracketed = url.hostname.startsWith('[') && url.hostname.endsWith(']');
  const hostname = bracketed ? url.hostname.slice(1, -1) : url.hostname;
  const literal = net.isIP(hostname) !== 0;
  if (literal) {
    const problem = addressProblem(hostname, allowLoopback);
    if (problem !== undefined) return { ok: false, error: 'refused_address', message: `is ${problem} (${hostname})` };
  } else if (!allowLoopback) {
    const name = hostname.replace(/\.$/, '');
    if (name === 'localhost' || name.endsWith('.localhost')) {
      return { ok: false, error: 'refused_address', message: 'must not be a localhost name' };
    }
  }
  return { ok: true, url, hostname, literal };
}

/** Why a webhook URL cannot be used (for settings validation, no DNS), or undefined when it can. */
export function webhookUrlProblem(url: string, options: { allowLoopback: boolean }): string | undefined {
  const checked = checkUrl(url, options.allowLoopback);
  return checked.ok ? undefined : checked.message;
}

export async function postSafely(options: PostOptions): Promise<PostResult> {
  const started = performance.now();
  const elapsed = () => Math.max(0, Math.round(performance.now() - started));
  const fail = (error: ErrorKind, message: string): PostResult => ({ kind: 'error', error, message, durationMs: elapsed() });
  const allowLoopback = options.allowLoopback ?? false;
  const timeoutMs = options.timeoutMs ?? defaultTimeoutMs;
  const remaining = () => timeoutMs - (performance.now() - started);

  const checked = checkUrl(options.url, allowLoopback);
  if (!checked.ok) return fail(checked.error, checked.message);
  const { url, hostname, literal } = checked;

  let addresses: string[];
  if (literal) {
    addresses = [hostname];
  } else {
    const resolved = await resolveWithin(options.resolve ?? defaultResolver, hostname, remaining());
    if (resolved.kind === 'timeout') return fail('timeout', `timed out after ${timeoutMs} ms resolving the host`);
    if (resolved.kind === 'failed') return fail('dns_failed', resolved.message);
    addresses = resolved.addresses;
    for (const address of addresses) {
      const problem = addressProblem(address, allowLoopback);
      if (problem !== undefined) return fail('refused_address', `resolves to ${problem} (${address})`);
    }
  }

  const outcome = await send({
    url,
    hostname,
    literal,
    addresses,
    headers: options.headers,
    body: options.body,
    timeLeftMs: remaining(),
    maxResponseBytes: options.maxResponseBytes ?? defaultMaxResponseBytes,
    bodyTimeoutMs: options.bodyTimeoutMs ?? defaultBodyTimeoutMs,
  });
  if (outcome.kind === 'response') return { ...outcome, durationMs: elapsed() };
  if (outcome.error === 'timeout') return fail('timeout', `timed out after ${timeoutMs} ms`);
  return fail(outcome.error, outcome.message);
}

type Resolved = { kind: 'ok'; addresses: string[] } | { kind: 'failed'; message: string } | { kind: 'timeout' };

async function resolveWithin(resolve: Resolver, hostname: string, timeLeftMs: number): Promise<Resolved> {
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<Resolved>((done) => {
    timer = setTimeout(() => done({ kind: 'timeout' }), Math.max(0, timeLeftMs));
  });
  const lookup = (async (): Promise<Resolved> => {
    try {
      const results = await resolve(hostname);
      if (!Array.isArray(results) || results.length === 0) return { kind: 'failed', message: 'host has no addresses' };
      return { kind: 'ok', addresses: results.map((result) => result.address) };
    } catch (error) {
      return { kind: 'failed', message: `could not resolve host (${errorCode(error) ?? 'lookup failed'})` };
    }
  })();
  try {
    return await Promise.race([lookup, deadline]);
  } finally {
    clearTimeout(timer);
  }
}

/** A `lookup` for net.connect that answers with the already-checked addresses, in both callback forms. */
function fixedLookup(addresses: string[]): LookupFunction {
  const entries = addresses.map((address) => ({ address, family: net.isIP(address) }));
  return (_hostname, lookupOptions, callback) => {
    process.nextTick(() => {
      const family =
        lookupOptions.family === 4 || lookupOptions.family === 'IPv4'
          ? 4
          : lookupOptions.family === 6 || lookupOptions.family === 'IPv6'
            ? 6
            : 0;
      const candidates = family === 0 ? entries : entries.filter((entry) => entry.family === family);
      const first = candidates[0];
      if (first === undefined) {
        const error: NodeJS.ErrnoException = new Error('no checked address of the requested family');
        error.code = 'ENOTFOUND';
        callback(error, lookupOptions.all ? [] : '', 0);
      } else if (lookupOptions.all) {
        callback(null, candidates);
      } else {
        callback(null, first.address, first.family);
      }
    });
  };
}

interface SendInput {
  url: URL;
  hostname: string;
  literal: boolean;
  addresses: string[];
  headers: Record<string, string>;
  body: string | Buffer;
  timeLeftMs: number;
  maxResponseBytes: number;
  bodyTimeoutMs: number;
}

type SendOutcome =
  | { kind: 'response'; status: number; headers: Record<string, string | string[] | undefined>; body: Buffer }
  | { kind: 'error'; error: 'timeout' | 'connection_failed'; message: string };

function send(input: SendInput): Promise<SendOutcome> {
  const body = typeof input.body === 'string' ? Buffer.from(input.body, 'utf8') : input.body;
  const headers: Record<string, string> = {};
  // The sender owns Host (always the URL's host) and the body framing.
  const owned = new Set(['host', 'content-length', 'transfer-encoding', 'connection']);
  for (const [name, value] of Object.entries(input.headers)) {
    if (!owned.has(name.toLowerCase())) headers[name] = value;
  }
  headers['Host'] = input.url.host;
  headers['Content-Length'] = String(body.length);

  return new Promise<SendOutcome>((resolve) => {
    let settled = false;
    let request: http.ClientRequest | undefined;
    let bodyTimer: NodeJS.Timeout | undefined;
    /** Once the status line is in: reports it with the body read so far. */
    let answered: (() => void) | undefined;
    const finish = (outcome: SendOutcome) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      clearTimeout(bodyTimer);
      resolve(outcome);
    };
    const timer = setTimeout(
      () => {
        finish({ kind: 'error', error: 'timeout', message: 'timed out' });
        request?.destroy();
      },
      Math.max(0, input.timeLeftMs),
    );

    const requestOptions: https.RequestOptions = {
      method: 'POST',
      protocol: input.url.protocol,
      host: input.hostname,
      port: input.url.port === '' ? undefined : Number(input.url.port),
      path: `${input.url.pathname}${input.url.search}`,
      headers,
      setHost: false,
      // A fresh agent per request: a pooled socket could have been connected for another lookup.
      agent: false,
      lookup: fixedLookup(input.addresses),
      // SNI and certificate checks use the URL's host name (never an IP: RFC 6066 forbids it in SNI).
      ...(input.literal ? {} : { servername: input.hostname }),
    };
    const transport = input.url.protocol === 'https:' ? https : http;

    try {
      request = transport.request(requestOptions, (response) => {
        // The status line is in: it decides the outcome, and the time-out no longer applies.
        clearTimeout(timer);
        const chunks: Buffer[] = [];
        let kept = 0;
        const done = () => {
          const body = Buffer.concat(chunks, kept);
          finish({ kind: 'response', status: response.statusCode ?? 0, headers: { ...response.headers }, body });
          // Whatever is left of the body is never read: the connection goes, and nothing is held for it.
          response.destroy();
          request?.destroy();
        };
        answered = done;
        bodyTimer = setTimeout(done, Math.max(0, input.bodyTimeoutMs));
        response.on('data', (chunk: Buffer) => {
          const part = chunk.subarray(0, input.maxResponseBytes - kept);
          chunks.push(part);
          kept += part.length;
          if (kept >= input.maxResponseBytes) done();
        });
        response.on('end', done);
        // The status is known: a connection lost while reading the body does not change it.
        response.on('error', done);
        response.on('close', done);
      });
    } catch (error) {
      // http.request throws synchronously for invalid header names/values; report without the values.
      finish({
        kind: 'error',
        error: 'connection_failed',
        message: `request could not be sent (${errorCode(error) ?? 'invalid request'})`,
      });
      return;
    }
    request.on('error', (error) => {
      // After the status line, a lost connection only ends the body.
      if (answered) {
        answered();
        return;
      }
      finish({ kind: 'error', error: 'connection_failed', message: `connection failed (${errorCode(error) ?? error.message})` });
    });
    request.end(body);
  });
}

function errorCode(error: unknown): string | undefined {
  if (typeof error === 'object' && error !== null && 'code' in error && typeof error.code === 'string') return error.code;
  return undefined;
}
