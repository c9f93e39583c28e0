import http from 'node:http';
import https from 'node:https';
import type { AddressInfo, LookupFunction } from 'node:net';
import { afterEach, describe, expect, test, vi } from 'vitest';
import {
  isAllowedAddress,
  postSafely,
  webhookUrlProblem,
  type PostResult,
  type Resolver,
} from '#functions/core/webhooks/safe-sender.ts';

const publicAddress = '93.184.216.34';

/** A resolver answering from a fixed table, failing like getaddrinfo for anything else. */
function tableResolver(table: Record<string, string[]>) {
  return vi.fn<Resolver>(async (hostname) => {
    const addresses = table[hostname];
    if (addresses === undefined) throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), { code: 'ENOTFOUND' });
    return addresses.map((address) => ({ address, family: address.includes(':') ? 6 : 4 }));
  });
}

function errorOf(result: PostResult) {
  expect(result.kind).toBe('error');
  if (result.kind !== 'error') throw new Error('expected an error result');
  expect(result.durationMs).toBeGreaterThanOrEqual(0);
  return result;
}

function spyOnTransports() {
  return { http: vi.spyOn(http, 'request'), https: vi.spyOn(https, 'request') };
}

afterEach(() => {
  vi.restoreAllMocks();
});

const urlAcceptsLongDecimalOctal = (() => {
  try {
    return new URL('https://017700000001/').hostname === '127.0.0.1';
  } catch {
    return false;
  }
})();

describe('refused addresses (no connection attempted)', () => {
  const literals = [
    'https://127.0.0.1/',
    'https://10.0.0.1/',
    'https://169.254.169.254/latest/meta-data',
    'https://[::1]/',
    'https://[::ffff:127.0.0.1]/',
    'https://[::ffff:7f00:1]/',
    'https://[64:ff9b::a00:1]/',
    'https://100.64.0.1/',
    'https://224.0.0.1/',
    'https://0.0.0.0/',
    'https://[::]/',
    'https://[fe80::1]/',
    'https://[fc00::1]/',
    'https://[::127.0.0.1]/',
    'https://[2002:7f00:1::1]/',
    'https://255.255.255.255/',
    'https://192.0.2.1/',
    'https://2130706433/',
    'https://0177.0.0.1/',
    'https://0x7f.0.0.1/',
    'https://127.1/',
    ...(urlAcceptsLongDecimalOctal ? ['https://017700000001/'] : []),
  ];

  test.each(literals)('%s', async (url) => {
    const transports = spyOnTransports();
    const resolve = tableResolver({});
    const result = errorOf(await postSafely({ url, headers: { 'x-signature': 'secret-sig' }, body: 'secret-body', resolve }));
    expect(result.error).toBe('refused_address');
    expect(result.message).not.toContain('secret');
    expect(resolve).not.toHaveBeenCalled();
    expect(transports.http).not.toHaveBeenCalled();
    expect(transports.https).not.toHaveBeenCalled();
    expect(webhookUrlProblem(url, { allowLoopback: false })).toBeDefined();
  });

  test.each([
    ['private.example.com', ['10.1.2.3']],
    ['mixed.example.com', [publicAddress, '192.168.1.1']],
    ['mapped.example.com', ['::ffff:169.254.169.254']],
    ['unique-local.example.com', ['fd12:3456::1']],
    ['loopback.example.com', ['127.0.0.53']],
  ])('host %s resolving to %j', async (hostname, addresses) => {
    const transports = spyOnTransports();
    const resolve = tableResolver({ [hostname]: addresses });
    const result = errorOf(await postSafely({ url: `https://${hostname}/hook`, headers: {}, body: '{}', resolve }));
    expect(result.error).toBe('refused_address');
    expect(resolve).toHaveBeenCalledWith(hostname);
    expect(transports.http).not.toHaveBeenCalled();
    expect(transports.https).not.toHaveBeenCalled();
    // Settings validation does no DNS, so a name is fine there.
    expect(webhookUrlProblem(`https://${hostname}/hook`, { allowLoopback: false })).toBeUndefined();
  });

  test('the message names the refused address', async () => {
    const resolve = tableResolver({ 'private.example.com': ['10.0.0.1'] });
    const result = errorOf(await postSafely({ url: 'https://private.example.com/', headers: {}, body: '', resolve }));
    expect(result.message).toBe('resolves to a private address (10.0.0.1)');
  });

  test('localhost names are refused without DNS unless loopback is allowed', async () => {
    const resolve = tableResolver({ localhost: ['127.0.0.1'] });
    for (const url of ['https://localhost/x', 'https://LOCALHOST./x', 'https://api.localhost/x']) {
      expect(errorOf(await postSafely({ url, headers: {}, body: '', resolve })).error).toBe('refused_address');
      expect(webhookUrlProblem(url, { allowLoopback: false })).toBeDefined();
      expect(webhookUrlProblem(url, { allowLoopback: true })).toBeUndefined();
    }
    expect(resolve).not.toHaveBeenCalled();
  });
});

describe('invalid URLs', () => {
  const long = `https://hooks.example.com/${'a'.repeat(2048)}`;
  test.each([
    ['http://hooks.example.com/', 'must use https'],
    ['ftp://hooks.example.com/', 'must use https'],
    ['file:///etc/passwd', 'must use https'],
    ['https://user:pass@hooks.example.com/', 'must not contain user info'],
    ['https://user@hooks.example.com/', 'must not contain user info'],
    ['https://hooks.example.com/#frag', 'must not contain a fragment'],
    ['https://hooks.example.com/#', 'must not contain a fragment'],
    [long, 'must be at most 2048 characters'],
    ['not a url', 'is not a valid URL'],
    ['https://[fe80::1%25eth0]/', 'is not a valid URL'],
  ])('%s', async (url, message) => {
    const transports = spyOnTransports();
    const resolve = tableResolver({ 'hooks.example.com': [publicAddress] });
    const result = errorOf(await postSafely({ url, headers: {}, body: '', resolve }));
    expect(result).toMatchObject({ error: 'invalid_url', message });
    expect(resolve).not.toHaveBeenCalled();
    expect(transports.http).not.toHaveBeenCalled();
    expect(transports.https).not.toHaveBeenCalled();
    expect(webhookUrlProblem(url, { allowLoopback: false })).toBe(message);
  });

  test('http is allowed only with allowLoopback', () => {
    expect(webhookUrlProblem('http://127.0.0.1:8080/hook', { allowLoopback: false })).toBe('must use https');
    expect(webhookUrlProblem('http://127.0.0.1:8080/hook', { allowLoopback: true })).toBeUndefined();
    expect(webhookUrlProblem('ftp://127.0.0.1/', { allowLoopback: true })).toBe('must use http or https');
  });

  test('a URL of exactly 2048 characters is accepted', () => {
    const prefix = 'https://hooks.example.com/';
    expect(webhookUrlProblem(prefix + 'a'.repeat(2048 - prefix.length), { allowLoopback: false })).toBeUndefined();
  });
});

describe('webhookUrlProblem', () => {
  test.each([
    'https://hooks.example.com/abc',
    'https://hooks.example.com:8443/abc?x=1',
    `https://${publicAddress}/hook`,
    'https://[2606:2800:220:1:248:1893:25c8:1946]/hook',
  ])('accepts %s', (url) => {
    expect(webhookUrlProblem(url, { allowLoopback: false })).toBeUndefined();
  });

  test('with allowLoopback, loopback literals pass but private ones do not', () => {
    expect(webhookUrlProblem('https://127.0.0.1/', { allowLoopback: true })).toBeUndefined();
    expect(webhookUrlProblem('https://[::1]/', { allowLoopback: true })).toBeUndefined();
    expect(webhookUrlProblem('https://10.0.0.1/', { allowLoopback: true })).toBe('is a private address (10.0.0.1)');
    expect(webhookUrlProblem('https://169.254.169.254/', { allowLoopback: true })).toBe(
      'is a link-local address (169.254.169.254)',
    );
  });
});

describe('isAllowedAddress', () => {
  test.each([
    [publicAddress, true],
    ['8.8.8.8', true],
    ['2606:2800:220:1:248:1893:25c8:1946', true],
    ['::ffff:8.8.8.8', true],
    ['64:ff9b::808:808', true],
    ['127.0.0.1', false],
    ['10.0.0.1', false],
    ['172.16.0.1', false],
    ['172.31.255.255', false],
    ['192.168.1.1', false],
    ['169.254.169.254', false],
    ['100.64.0.1', false],
    ['224.0.0.1', false],
    ['255.255.255.255', false],
    ['0.0.0.0', false],
    ['192.0.2.1', false],
    ['198.18.0.1', false],
    ['240.0.0.1', false],
    ['::', false],
    ['::1', false],
    ['::ffff:10.0.0.1', false],
    ['64:ff9b::a00:1', false],
    ['64:ff9b:1::808:808', false],
    ['::7f00:1', false],
    ['fe80::1', false],
    ['fe80::1%eth0', false],
    ['fc00::1', false],
    ['fd00::1', false],
    ['ff02::1', false],
    ['2002:c000:0204::1', false],
    ['2001::1', false],
    ['2001:2::1', false],
    ['2001:db8::1', false],
    ['100::1', false],
    ['010.0.0.1', false],
    ['0x7f.1', false],
    ['not-an-address', false],
    ['', false],
  ])('%s → %s', (address, allowed) => {
    expect(isAllowedAddress(address, { allowLoopback: false })).toBe(allowed);
  });

  test.each([
    ['127.0.0.1', true],
    ['127.255.0.9', true],
    ['::1', true],
    ['::ffff:127.0.0.1', true],
    [publicAddress, true],
    ['10.0.0.1', false],
    ['169.254.169.254', false],
    ['192.168.0.1', false],
    ['fc00::1', false],
    ['64:ff9b::7f00:1', false],
    ['0.0.0.0', false],
  ])('with allowLoopback: %s → %s', (address, allowed) => {
    expect(isAllowedAddress(address, { allowLoopback: true })).toBe(allowed);
  });
});

describe('DNS failures', () => {
  test('a resolver that throws ENOTFOUND is dns_failed', async () => {
    const transports = spyOnTransports();
    const result = errorOf(
      await postSafely({ url: 'https://missing.example.com/', headers: {}, body: '', resolve: tableResolver({}) }),
    );
    expect(result).toMatchObject({ error: 'dns_failed', message: 'could not resolve host (ENOTFOUND)' });
    expect(transports.https).not.toHaveBeenCalled();
  });

  test('a resolver with no addresses is dns_failed', async () => {
    const result = errorOf(
      await postSafely({
        url: 'https://empty.example.com/',
        headers: {},
        body: '',
        resolve: tableResolver({ 'empty.example.com': [] }),
      }),
    );
    expect(result.error).toBe('dns_failed');
  });

  test('a resolver that never answers is a timeout', async () => {
    const resolve: Resolver = () => new Promise(() => {});
    const result = errorOf(await postSafely({ url: 'https://slow.example.com/', headers: {}, body: '', resolve, timeoutMs: 50 }));
    expect(result.error).toBe('timeout');
  });
});

describe('connecting to the checked address', () => {
  const servers: http.Server[] = [];

  afterEach(async () => {
    for (const server of servers.splice(0)) {
      server.closeAllConnections();
      await new Promise((done) => server.close(done));
    }
  });

  async function listen(handler: http.RequestListener): Promise<number> {
    const server = http.createServer(handler);
    servers.push(server);
    await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
    return (server.address() as AddressInfo).port;
  }

  const resolve = tableResolver({ 'receiver.test': ['127.0.0.1'] });
  /** An empty POST to the receiver listening on `port` (loopback allowed), with `options` on top. */
  const postToReceiver = (port: number, options: Partial<Parameters<typeof postSafely>[0]> = {}) =>
    postSafely({ url: `http://receiver.test:${port}/`, headers: {}, body: '', allowLoopback: true, resolve, ...options });

  test('posts the body and headers to the resolved address with the URL host', async () => {
    const received: { method?: string; url?: string; headers?: http.IncomingHttpHeaders; body?: string }[] = [];
    const port = await listen((request, response) => {
      const chunks: Buffer[] = [];
      request.on('data', (chunk: Buffer) => chunks.push(chunk));
      request.on('end', () => {
        received.push({
          method: request.method,
          url: request.url,
          headers: request.headers,
          body: Buffer.concat(chunks).toString(),
        });
        response.writeHead(200, { 'x-reply': 'yes' }).end('ok');
      });
    });
    const transports = spyOnTransports();
    const body = JSON.stringify({ alert: 'ünïcode' });
    const result = await postSafely({
      url: `http://receiver.test:${port}/hooks/1?x=2`,
      headers: { 'content-type': 'application/json', 'webhook-signature': 'v1,abc', host: 'evil.example.com' },
      body,
      allowLoopback: true,
      resolve,
    });
    expect(result).toMatchObject({ kind: 'response', status: 200, headers: { 'x-reply': 'yes' }, body: Buffer.from('ok') });
    expect(result.durationMs).toBeGreaterThanOrEqual(0);
    expect(received).toHaveLength(1);
    expect(received[0]).toMatchObject({
      method: 'POST',
      url: '/hooks/1?x=2',
      body,
      headers: {
        host: `receiver.test:${port}`,
        'content-type': 'application/json',
        'webhook-signature': 'v1,abc',
        'content-length': String(Buffer.byteLength(body)),
      },
    });
    expect(transports.http).toHaveBeenCalledTimes(1);
    expect(transports.https).not.toHaveBeenCalled();
  });

  test('a Buffer body is sent as is', async () => {
    let got = '';
    const port = await listen((request, response) => {
      request.setEncoding('utf8');
      request.on('data', (chunk: string) => (got += chunk));
      request.on('end', () => response.writeHead(204).end());
    });
    const result = await postToReceiver(port, { body: Buffer.from('raw bytes') });
    expect(result).toMatchObject({ kind: 'response', status: 204 });
    expect(got).toBe('raw bytes');
  });

  test('IP-literal loopback URLs connect when allowed', async () => {
    const port = await listen((_request, response) => response.writeHead(202).end());
    const result = await postSafely({ url: `http://127.0.0.1:${port}/`, headers: {}, body: '', allowLoopback: true, resolve });
    expect(result).toMatchObject({ kind: 'response', status: 202 });
  });

  test('redirects are reported, not followed', async () => {
    let targetHits = 0;
    const port = await listen((request, response) => {
      request.resume();
      if (request.url === '/target') targetHits += 1;
      response.writeHead(302, { location: `http://receiver.test:${port}/target` }).end();
    });
    const result = await postSafely({
      url: `http://receiver.test:${port}/start`,
      headers: {},
      body: 'x',
      allowLoopback: true,
      resolve,
    });
    expect(result).toMatchObject({ kind: 'response', status: 302, headers: { location: `http://receiver.test:${port}/target` } });
    expect(targetHits).toBe(0);
  });

  test('a large response body is read only partly: its first maxResponseBytes (1,024 by default)', async () => {
    let socketClosed = false;
    const port = await listen((request, response) => {
      request.resume();
      response.on('close', () => (socketClosed = true));
      response.writeHead(200, { 'content-type': 'application/octet-stream' });
      // 1 MB and then nothing more: a sender that drained the body would wait until the time-out.
      for (let i = 0; i < 16; i += 1) response.write(Buffer.alloc(65_536, 0x61));
    });
    const result = await postToReceiver(port, { timeoutMs: 10_000, bodyTimeoutMs: 10_000 });
    expect(result).toMatchObject({ kind: 'response', status: 200, body: Buffer.alloc(1024, 0x61) });
    await vi.waitFor(() => expect(socketClosed).toBe(true));
    const smaller = await postToReceiver(port, { timeoutMs: 10_000, bodyTimeoutMs: 10_000, maxResponseBytes: 10 });
    expect(smaller).toMatchObject({ kind: 'response', status: 200, body: Buffer.alloc(10, 0x61) });
  });

  test('a server that never sends its status line times out, also when it has read the request', async () => {
    const port = await listen((request) => request.resume());
    const result = errorOf(await postToReceiver(port, { timeoutMs: 300 }));
    expect(result.error).toBe('timeout');
  });

  test('a status line in time decides: a body that never ends, or comes slower than the time-out, is read only briefly and dropped', async () => {
    let socketClosed = false;
    let timer: NodeJS.Timeout | undefined;
    const port = await listen((request, response) => {
      request.resume();
      response.on('close', () => {
        socketClosed = true;
        clearInterval(timer);
      });
      response.writeHead(200);
      response.write('partial');
      // More body, a little at a time, for far longer than the time-out.
      timer = setInterval(() => response.write('.'), 20);
    });
    const result = await postToReceiver(port, { timeoutMs: 300, bodyTimeoutMs: 100 });
    expect(result).toMatchObject({ kind: 'response', status: 200 });
    if (result.kind !== 'response') throw new Error('expected a response');
    expect(result.body.toString()).toMatch(/^partial\.*$/);
    await vi.waitFor(() => expect(socketClosed).toBe(true));
  });

  test('a connection lost after the status line leaves the status and the body read so far', async () => {
    const port = await listen((request, response) => {
      request.resume();
      response.writeHead(201);
      response.write('half', () => setTimeout(() => request.socket.destroy(), 20));
    });
    const result = await postToReceiver(port, { timeoutMs: 2_000, bodyTimeoutMs: 2_000 });
    expect(result).toMatchObject({ kind: 'response', status: 201, body: Buffer.from('half') });
  });

  test('a closed port is connection_failed', async () => {
    const port = await listen(() => {});
    const server = servers.pop();
    await new Promise((done) => server?.close(done));
    const result = errorOf(await postToReceiver(port));
    expect(result.error).toBe('connection_failed');
    expect(result.message).toContain('ECONNREFUSED');
  });

  test('a TLS failure is connection_failed, and https uses the URL host for SNI', async () => {
    // An https request to a plain-HTTP server fails the TLS handshake.
    const port = await listen((_request, response) => response.end());
    const transports = spyOnTransports();
    const result = errorOf(
      await postToReceiver(port, {
        url: `https://receiver.test:${port}/`,
        headers: { 'x-signature': 'secret-sig' },
        body: 'secret-body',
      }),
    );
    expect(result.error).toBe('connection_failed');
    expect(result.message).not.toContain('secret');
    expect(transports.https).toHaveBeenCalledTimes(1);
    const options = transports.https.mock.calls[0]?.[0] as https.RequestOptions;
    expect(options).toMatchObject({ host: 'receiver.test', servername: 'receiver.test', method: 'POST', agent: false });
  });

  test('the lookup option answers with the checked address in both callback forms', async () => {
    const port = await listen((_request, response) => response.end());
    const transports = spyOnTransports();
    await postToReceiver(port);
    const lookup = (transports.http.mock.calls[0]?.[0] as http.RequestOptions).lookup as LookupFunction;
    const single = await new Promise((done) =>
      lookup('anything.example', { family: 0 }, (error, address, family) => done({ error, address, family })),
    );
    expect(single).toEqual({ error: null, address: '127.0.0.1', family: 4 });
    const all = await new Promise((done) =>
      lookup('anything.example', { all: true }, (error, addresses) => done({ error, addresses })),
    );
    expect(all).toEqual({ error: null, addresses: [{ address: '127.0.0.1', family: 4 }] });
    const wrongFamily = await new Promise<NodeJS.ErrnoException | null>((done) =>
      lookup('anything.example', { family: 6 }, (error) => done(error)),
    );
    expect(wrongFamily?.code).toBe('ENOTFOUND');
  });

  test('allowLoopback still refuses private and metadata addresses', async () => {
    const transports = spyOnTransports();
    const privateResolve = tableResolver({ 'internal.test': ['10.0.0.1'], 'metadata.test': ['169.254.169.254'] });
    for (const url of [
      'http://10.0.0.1/',
      'http://169.254.169.254/latest/meta-data',
      'http://internal.test/',
      'http://metadata.test/',
    ]) {
      const result = errorOf(await postSafely({ url, headers: {}, body: '', allowLoopback: true, resolve: privateResolve }));
      expect(result.error).toBe('refused_address');
    }
    expect(transports.http).not.toHaveBeenCalled();
  });
});
