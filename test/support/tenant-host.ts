import { request } from 'node:http';
import { expectDocumented } from './documented.ts';

export interface HostAnswer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: string;
}

/**
 * A GET to a URL on a tenant domain (`http://acme-1.localhost:PORT/...`), sent to this machine with
 * that Host header, as a browser would (browsers resolve *.localhost to loopback; Node does not).
 */
export async function getOnTenantHost(url: string, cookies: string[] = []): Promise<HostAnswer> {
  const target = new URL(url);
  const answer = await new Promise<HostAnswer>((resolve, reject) => {
    const outgoing = request(
      {
        host: '127.0.0.1',
        port: target.port,
        path: `${target.pathname}${target.search}`,
        method: 'GET',
        headers: { host: target.host, ...(cookies.length > 0 ? { cookie: cookies.join('; ') } : {}) },
      },
      (incoming) => {
        let body = '';
        incoming.setEncoding('utf8');
        incoming.on('data', (chunk: string) => {
          body += chunk;
        });
        incoming.on('end', () => resolve({ status: incoming.statusCode ?? 0, headers: incoming.headers, body }));
      },
    );
    outgoing.on('error', reject);
    outgoing.end();
  });
  const contentType = [answer.headers['content-type']].flat()[0];
  const body = contentType?.startsWith('application/json') ? (JSON.parse(answer.body) as unknown) : answer.body;
  expectDocumented('GET', target.pathname, { status: answer.status, contentType, body });
  return answer;
}

/** `name=value` of each Set-Cookie header. */
export const cookiesOf = (answer: HostAnswer) =>
  ([] as string[]).concat(answer.headers['set-cookie'] ?? []).map((cookie) => cookie.split(';')[0] ?? '');
