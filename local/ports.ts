import type { Server as HttpServer } from 'node:http';
import { type AddressInfo, createServer } from 'node:net';

/** A port free on loopback right now (the OS picks it). */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => (typeof address === 'object' && address ? resolve(address.port) : reject(new Error('No port'))));
    });
  });
}

/** A port the twin was asked to listen on is taken: said in one line, with what to do. */
export class PortBusyError extends Error {
  constructor(port: number) {
    super(
      `Port ${port} is in use (a twin already running?): stop what holds it, or start on another one: PORT=${port + 1} npm start`,
    );
    this.name = 'PortBusyError';
  }
}

/**
 * Throws PortBusyError when `port` of `host` is taken, before anything slow starts (DynamoDB Local).
 * Port 0 (one the OS picks) is never busy.
 */
export async function ensurePortFree(port: number, host = '127.0.0.1'): Promise<void> {
  if (port === 0) return;
  const probe = createServer();
  await new Promise<void>((resolve, reject) => {
    probe.once('error', (error: NodeJS.ErrnoException) => reject(error.code === 'EADDRINUSE' ? new PortBusyError(port) : error));
    probe.listen(port, host, () => probe.close(() => resolve()));
  });
}

/** A server of the twin's, listening, with its URL and a way to close it at once (open connections too). */
export interface Listening {
  url: string;
  close(): Promise<void>;
}

/** Starts `server` on `port` (0: one the OS picks) of `host`, keeping idle connections 5 s as API Gateway and CloudFront do. */
export async function listen(server: HttpServer, port: number, host = '127.0.0.1'): Promise<Listening> {
  server.keepAliveTimeout = 5_000;
  await new Promise<void>((resolve, reject) => {
    server.once('error', (error: NodeJS.ErrnoException) => reject(error.code === 'EADDRINUSE' ? new PortBusyError(port) : error));
    server.listen(port, host, () => resolve());
  });
  const { port: bound } = server.address() as AddressInfo;
  return {
    url: `http://localhost:${bound}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
