import { randomBytes } from 'node:crypto';
import { createServer, type IncomingHttpHeaders, request as httpRequest } from 'node:http';
import { ORIGIN_HEADER } from '#functions/core/edge/origin-secret.ts';
import type { EdgeHandler, EdgeHeaders } from './edge-function.ts';
import { type Listening, listen } from './ports.ts';

export type Edge = Listening;

/** CloudFront's 502 when the origin cannot be reached (its own page; the twin says it in a line). */
const originUnreachable = 'The twin edge could not reach its origin (the gateway).';

/**
 * The twin's stand-in for CloudFront in front of the API (`npm start -- --edge`): each request goes
 * through the viewer-request function the stack deploys (functions/edge/viewer-request.js, run by
 * local/edge-function.ts), which may answer it itself; the rest is sent to the origin, the gateway,
 * with what CloudFront adds: the origin secret in `x-origin-verify` (which the gateway's authorizer
 * checks) and the caller's address in `CloudFront-Viewer-Address`. The WAF's rate limits are not
 * played here (docs/architecture.md, where the twin approximates AWS).
 */
export async function startEdge(options: {
  port: number;
  host?: string;
  originUrl: string;
  originSecret: string;
  viewerRequest: EdgeHandler;
}): Promise<Edge> {
  const origin = new URL(options.originUrl);
  const server = createServer((request, response) => {
    const viewerIp = request.socket.remoteAddress ?? '127.0.0.1';
    const headers: EdgeHeaders = {};
    // Every field as sent, a repeated one included (Node.js keeps only the first Authorization in `headers`).
    for (const [name, values] of Object.entries(request.headersDistinct)) {
      if (values === undefined) continue;
      headers[name] = {
        value: values[0] ?? '',
        ...(values.length > 1 ? { multiValue: values.map((each) => ({ value: each })) } : {}),
      };
    }
    const rawUrl = request.url ?? '/';
    const queryAt = rawUrl.indexOf('?');
    const uri = queryAt < 0 ? rawUrl : rawUrl.slice(0, queryAt);
    const event = {
      version: '1.0',
      context: { requestId: randomBytes(42).toString('base64url'), eventType: 'viewer-request' },
      viewer: { ip: viewerIp },
      request: { method: request.method ?? 'GET', uri, querystring: {}, headers, cookies: {} },
    };
    options
      .viewerRequest(event)
      .then((result) => {
        if ('statusCode' in result) {
          const answerHeaders: Record<string, string> = {};
          for (const [name, header] of Object.entries(result.headers)) answerHeaders[name] = header.value;
          response.writeHead(result.statusCode, result.statusDescription, answerHeaders).end(result.body.data);
          request.resume();
          return;
        }
        const forwarded: IncomingHttpHeaders = {
          ...request.headers,
          [ORIGIN_HEADER]: options.originSecret,
          'cloudfront-viewer-address': `${viewerIp}:${request.socket.remotePort ?? 0}`,
        };
        const upstream = httpRequest(
          { host: origin.hostname, port: origin.port, method: request.method, path: rawUrl, headers: forwarded },
          (answer) => {
            response.writeHead(answer.statusCode ?? 502, answer.headers);
            answer.pipe(response);
          },
        );
        upstream.on('error', () => {
          if (!response.headersSent) response.writeHead(502, { 'content-type': 'text/plain' }).end(originUnreachable);
        });
        request.pipe(upstream);
      })
      .catch((error: unknown) => {
        // CloudFront answers 503 when a function fails.
        console.error('edge function failed', error);
        if (!response.headersSent) response.writeHead(503, { 'content-type': 'text/plain' }).end('The edge function failed.');
      });
  });
  return listen(server, options.port, options.host);
}
