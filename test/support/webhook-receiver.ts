import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface Received {
  path: string;
  headers: IncomingHttpHeaders;
  body: string;
  at: number;
  /** When the answer went out (or the connection was dropped); unset while the request waits. */
  answeredAt?: number;
  /** Set when the sender closed the connection before the whole answer's body was written. */
  bodyCut?: boolean;
}

export interface Reply {
  status: number;
  headers?: Record<string, string>;
  /** Answer this much later (a receiver slower than the 10-second time-out). */
  delayMs?: number;
  /** Answer once this settles (a test holds an attempt open until it has changed something). */
  after?: Promise<unknown>;
  /** Close the connection without answering, as a receiver that is down does: the sender sees a failed connection. */
  drop?: boolean;
  /** The answer's body; `ok` by default. */
  body?: string;
  /**
   * Send the status line and headers at once, then the body `chunkLength` characters at a time, one chunk every
   * `everyMs` (the first with the headers): a receiver whose body is slow to come.
   */
  trickle?: { chunkLength: number; everyMs: number };
}

/** A real HTTP receiver on loopback that records every request and answers as the test says. */
export async function startReceiver() {
  const received: Received[] = [];
  let reply: (request: Received) => Reply = () => ({ status: 200 });
  const server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const entry: Received = {
        path: request.url ?? '',
        headers: request.headers,
        body: Buffer.concat(chunks).toString('utf8'),
        at: Date.now(),
      };
      received.push(entry);
      const { status, headers, delayMs, after, drop, body = 'ok', trickle } = reply(entry);
      const answer = () => {
        entry.answeredAt = Date.now();
        if (response.destroyed) return;
        if (drop) {
          request.socket.destroy();
          return;
        }
        response.writeHead(status, headers);
        if (!trickle) {
          response.end(body);
          return;
        }
        let sent = 0;
        const next = () => {
          if (response.destroyed) return;
          response.write(body.slice(sent, sent + trickle.chunkLength));
          sent += trickle.chunkLength;
          if (sent >= body.length) response.end();
          else setTimeout(next, trickle.everyMs).unref();
        };
        response.on('close', () => {
          if (sent < body.length) entry.bodyCut = true;
        });
        next();
      };
      if (after) void after.then(answer, answer);
      else if (delayMs) setTimeout(answer, delayMs).unref();
      else answer();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: (path: string) => `http://127.0.0.1:${port}${path}`,
    received,
    /** Requests to one path. */
    at: (path: string) => received.filter((entry) => entry.path === path),
    replyWith(next: (request: Received) => Reply) {
      reply = next;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
