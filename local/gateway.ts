import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type {
  APIGatewayProxyEventV2,
  APIGatewayProxyStructuredResultV2,
  APIGatewayRequestAuthorizerEventV2,
  APIGatewaySimpleAuthorizerResult,
  Context,
} from 'aws-lambda';
import { type Route, routeKey, routes, routeTimeoutSeconds, unmatchedRoute } from '#functions/routes.ts';
import { accessLine } from './access-log.ts';
import { apiGatewayEvent } from './api-gateway-event.ts';
import { invoke } from './lambda-context.ts';
import { type Listening, listen } from './ports.ts';
import { matchRoute } from '#functions/core/api/route-matching.ts';
import { fitsOneResult } from '#functions/core/api/answer-fit.ts';
import {
  gatewayAnswers,
  httpApiPayloadBytes,
  httpApiRequestLineAndHeaderBytes,
  lambdaSyncPayloadBytes,
} from '#functions/core/aws-limits.ts';
import { eventBytes } from './api-gateway-event.ts';

export type LambdaHandler = (event: APIGatewayProxyEventV2, context: Context) => Promise<APIGatewayProxyStructuredResultV2>;

const handlerModules = new Map<string, Promise<LambdaHandler>>();

/** Imports a route's handler module once, like a warm Lambda container. */
function loadHandler(route: Pick<Route, 'handler'>): Promise<LambdaHandler> {
  let loaded = handlerModules.get(route.handler);
  if (!loaded) {
    const file = new URL(`../functions/http/${route.handler}.ts`, import.meta.url);
    loaded = import(file.href).then((module: { handler: LambdaHandler }) => module.handler);
    handlerModules.set(route.handler, loaded);
  }
  return loaded;
}

export type Gateway = Listening;

/**
 * An HTTP API Lambda authorizer (REQUEST, payload 2.0, simple responses) on every route, as the stack
 * puts the origin check on every route with the edge on (lib/origin-secret.ts). API Gateway answers 401
 * without calling it when the identity source (a header) is missing, 403 when it answers
 * `isAuthorized: false`, and caches each answer per identity source value for `cacheSeconds`
 * (https://docs.aws.amazon.com/apigateway/latest/developerguide/http-api-lambda-authorizer.html).
 */
export interface GatewayAuthorizer {
  /** Its file under functions/ (without .ts), exporting `handler`. */
  handler: string;
  /** The header that is its identity source (lower case). */
  identityHeader: string;
  cacheSeconds: number;
}

type AuthorizerHandler = (
  event: APIGatewayRequestAuthorizerEventV2,
  context: Context,
) => Promise<APIGatewaySimpleAuthorizerResult>;

/** Answers of the authorizer by identity source value, until when they hold (epoch ms). */
function authorizerGate(authorizer: GatewayAuthorizer) {
  const cached = new Map<string, { allowed: boolean; until: number }>();
  const loaded = import(new URL(`../functions/${authorizer.handler}.ts`, import.meta.url).href).then(
    (module: { handler: AuthorizerHandler }) => module.handler,
  );
  /** Undefined when the request may go on, else API Gateway's own answer. */
  return async (event: APIGatewayProxyEventV2): Promise<{ status: number; message: string } | undefined> => {
    const value = event.headers[authorizer.identityHeader];
    if (!value) return { status: 401, message: 'Unauthorized' };
    const now = Date.now();
    let answer = cached.get(value);
    if (!answer || answer.until <= now) {
      const { isAuthorized } = await invoke(
        await loaded,
        {
          type: 'REQUEST',
          version: '2.0',
          routeArn: `arn:aws:execute-api:local:000000000000:local/$default/${event.routeKey.replace(' ', '')}`,
          identitySource: [value],
          routeKey: event.routeKey,
          rawPath: event.rawPath,
          rawQueryString: event.rawQueryString,
          cookies: event.cookies ?? [],
          headers: event.headers,
          queryStringParameters: event.queryStringParameters ?? {},
          requestContext: event.requestContext,
          pathParameters: event.pathParameters ?? {},
          stageVariables: {},
        } as unknown as APIGatewayRequestAuthorizerEventV2,
        authorizer.handler.split('/').at(-1) ?? authorizer.handler,
        10_000,
      );
      answer = { allowed: isAuthorized, until: now + authorizer.cacheSeconds * 1000 };
      cached.set(value, answer);
    }
    return answer.allowed ? undefined : { status: 403, message: 'Forbidden' };
  };
}

/**
 * The local stand-in for API Gateway: turns each HTTP request into a payload-v2 event for the
 * route's handler, as the HTTP API does, and writes the handler's result back.
 */
export async function startGateway(options: {
  port: number;
  host?: string;
  log?: boolean;
  /** GETs to hosts ending so that match no route get the BI stand-in page (the twin has no BI). */
  biStandInHosts?: string;
  /** The authorizer every route has (with the edge on: the origin check). */
  authorizer?: GatewayAuthorizer;
}): Promise<Gateway> {
  const gate = options.authorizer && authorizerGate(options.authorizer);
  const server = createServer((request, response) => {
    const started = Date.now();
    serve(request, response, options.biStandInHosts, gate)
      .catch((error: unknown) => {
        console.error('gateway error', error);
        if (!response.headersSent) send(response, 500, { message: 'Internal Server Error' });
      })
      .finally(() => {
        if (options.log) console.log(accessLine(request.method, request.url, response.statusCode, Date.now() - started));
      });
  });
  return listen(server, options.port, options.host);
}

/**
 * What a tenant's BI shows after the SSO landing redirects to it: on AWS the real BI front end
 * answers there; the twin has none, so this page stands in, reading the session as the BI would.
 */
const biStandInPage = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>BI (local stand-in)</title></head>
<body>
<h1 id="who">Reading the session…</h1>
<p>Route: <code id="route"></code></p>
<script>
  document.getElementById('route').textContent = location.pathname + location.search;
  fetch('/auth/session', { credentials: 'same-origin' })
    .then((answer) => answer.json())
    .then((body) => {
      document.getElementById('who').textContent = body.data ? 'Signed in as ' + body.data.user.login : 'No session';
    });
</script>
</body></html>
`;

function send(response: ServerResponse, status: number, body: unknown): void {
  response.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
}

/** One of API Gateway's own answers (aws-limits.ts), as it sends them: no function's envelope. */
const refuse = (response: ServerResponse, answer: { status: number; body: unknown }) =>
  send(response, answer.status, answer.body);

/** The request line and header values, as the HTTP API counts them against its 10,240 bytes. */
function requestLineAndHeaderBytes(request: IncomingMessage): number {
  const requestLine = Buffer.byteLength(`${request.method ?? ''} ${request.url ?? ''} HTTP/${request.httpVersion}`);
  const values = request.rawHeaders.filter((_, index) => index % 2 === 1);
  return values.reduce((total, value) => total + Buffer.byteLength(value), requestLine);
}

/**
 * A Lambda proxy integration as API Gateway and Lambda run it: Lambda refuses an event or a result
 * over its synchronous payload limit, and stops a function at its timeout; API Gateway then answers
 * its own 500, as for a function that failed. The function's result otherwise.
 */
export async function integrate(
  handler: LambdaHandler,
  event: APIGatewayProxyEventV2,
  functionName: string,
  timeoutMs = routeTimeoutSeconds * 1000,
): Promise<{ result: APIGatewayProxyStructuredResultV2 } | { refused: (typeof gatewayAnswers)['integrationFailed'] }> {
  const refused = gatewayAnswers.integrationFailed;
  if (eventBytes(event) > lambdaSyncPayloadBytes) {
    console.error(`${functionName}: the event is over Lambda's ${lambdaSyncPayloadBytes} bytes`);
    return { refused };
  }
  let result: APIGatewayProxyStructuredResultV2;
  try {
    result = await withTimeout(invoke(handler, event, functionName, timeoutMs), timeoutMs);
  } catch (error) {
    console.error(`${functionName} failed`, error);
    return { refused };
  }
  if (!fitsOneResult(result)) {
    console.error(`${functionName}: the result is over Lambda's ${lambdaSyncPayloadBytes} bytes`);
    return { refused };
  }
  return { result };
}

/** The invocation's result, or a failure once the function's timeout passes (Lambda stops it then). */
async function withTimeout<T>(invocation: Promise<T>, timeoutMs: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timedOut = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`Task timed out after ${timeoutMs / 1000} seconds`)), timeoutMs);
  });
  try {
    return await Promise.race([invocation, timedOut]);
  } finally {
    clearTimeout(timer);
  }
}

async function readBody(request: IncomingMessage): Promise<Buffer | undefined> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of request) {
    size += (chunk as Buffer).length;
    if (size > httpApiPayloadBytes) return undefined;
    chunks.push(chunk as Buffer);
  }
  return Buffer.concat(chunks);
}

/**
 * The path and query of a request as sent. API Gateway routes on the path as it arrives: it
 * resolves no dot segments and merges no slashes, so `/x/../tenant` and `//evil.com/tenant` match
 * no route there, and must not here either (WHATWG URL parsing would turn both into `/tenant`). A
 * target in absolute form (`http://host/path`) keeps its path as written.
 */
export function requestTarget(target: string): { path: string; rawQuery: string } {
  const absolute = /^[a-z][a-z0-9+.-]*:\/\/[^/?]*/i.exec(target);
  const rest = absolute ? target.slice(absolute[0].length) : target;
  const queryAt = rest.indexOf('?');
  const path = queryAt < 0 ? rest : rest.slice(0, queryAt);
  return { path: path.startsWith('/') ? path : `/${path}`, rawQuery: queryAt < 0 ? '' : rest.slice(queryAt + 1) };
}

async function serve(
  request: IncomingMessage,
  response: ServerResponse,
  biStandInHosts: string | undefined,
  gate: ReturnType<typeof authorizerGate> | undefined,
): Promise<void> {
  const { path, rawQuery } = requestTarget(request.url ?? '/');
  const method = request.method ?? 'GET';
  const match = matchRoute(method, path, routes);
  if (requestLineAndHeaderBytes(request) > httpApiRequestLineAndHeaderBytes) {
    return refuse(response, gatewayAnswers.headersTooLarge);
  }
  const body = await readBody(request);
  if (body === undefined) return refuse(response, gatewayAnswers.payloadTooLarge);
  const hostName = (request.headers.host ?? '').replace(/:\d+$/, '');
  if (!match && method === 'GET' && biStandInHosts && hostName.endsWith(biStandInHosts)) {
    response.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(biStandInPage);
    return;
  }

  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(request.headers)) {
    if (value !== undefined && name !== 'cookie') headers[name] = Array.isArray(value) ? value.join(',') : value;
  }
  // No route: API Gateway's $default route, whose function answers 404 or 405 in the error envelope.
  const served = match?.route ?? unmatchedRoute;
  const event = apiGatewayEvent({
    method,
    routeKey: match ? routeKey(match.route) : unmatchedRoute.routeKey,
    pathParameters: match?.pathParameters ?? {},
    path,
    rawQuery,
    headers,
    cookies: request.headers.cookie?.split(';').map((cookie) => cookie.trim()),
    body,
    protocol: `HTTP/${request.httpVersion}`,
    sourceIp: request.socket.remoteAddress ?? '127.0.0.1',
  });
  // HTTP APIs name each request in this header of every answer, their own refusals included.
  response.setHeader('apigw-requestid', event.requestContext.requestId);
  const refusal = gate && (await gate(event));
  if (refusal) return send(response, refusal.status, { message: refusal.message });
  const outcome = await integrate(await loadHandler(served), event, served.handler);
  if ('refused' in outcome) return refuse(response, outcome.refused);
  const { result } = outcome;
  const responseHeaders: Record<string, string | string[]> = { ...(result.headers as Record<string, string>) };
  if (result.cookies?.length) responseHeaders['set-cookie'] = result.cookies;
  response.writeHead(result.statusCode ?? 200, responseHeaders);
  response.end(result.body === undefined ? undefined : Buffer.from(result.body, result.isBase64Encoded ? 'base64' : 'utf8'));
}
