/**
 * A route's function invoked in this process, as the twin's gateway invokes it (the same event, a
 * Lambda context with the route's time-out or a shorter one), without HTTP in between: what the
 * fault-injection tests need to fault one invocation's AWS calls and no other's.
 */
import type { APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2, Context } from 'aws-lambda';
import { apiGatewayEvent } from '#local/api-gateway-event.ts';
import { invoke } from '#local/lambda-context.ts';
import { matchRoute } from '#functions/core/api/route-matching.ts';
import { routeKey, routes, routeTimeoutSeconds } from '#functions/routes.ts';

export interface Call {
  method: string;
  /** The path, with its query string if any. */
  path: string;
  token?: string;
  body?: unknown;
  /** The body exactly as sent (YAML, bytes that are not JSON), instead of `body` as JSON. */
  rawBody?: string | Buffer;
  headers?: Record<string, string>;
}

export interface Answer {
  status: number;
  headers: Record<string, string>;
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- tests read arbitrary JSON answers
  body: any;
  /** The bytes Lambda counts for the function's result: the result object as JSON (measured here, not by the pipeline's own code). */
  resultBytes: number;
}

type Handler = (event: APIGatewayProxyEventV2, context: Context) => Promise<APIGatewayProxyStructuredResultV2>;
const handlers = new Map<string, Promise<Handler>>();

/** Invokes the route `call` matches; `timeoutMs` is the invocation's time-out (its deadline). */
export async function callRoute(call: Call, timeoutMs = routeTimeoutSeconds * 1000): Promise<Answer> {
  const [path = '', rawQuery = ''] = call.path.split('?');
  const match = matchRoute(call.method, path, routes);
  if (!match) throw new Error(`No route for ${call.method} ${path}`);
  const name = match.route.handler;
  let handler = handlers.get(name);
  if (!handler) {
    const file = new URL(`../../functions/http/${name}.ts`, import.meta.url);
    handler = import(file.href).then((module: { handler: Handler }) => module.handler);
    handlers.set(name, handler);
  }
  const headers: Record<string, string> = { host: 'localhost', ...call.headers };
  if (call.token) headers.authorization = `Bearer ${call.token}`;
  if (call.body !== undefined) headers['content-type'] ??= 'application/json';
  const body =
    call.rawBody !== undefined
      ? Buffer.from(call.rawBody)
      : call.body === undefined
        ? Buffer.alloc(0)
        : Buffer.from(JSON.stringify(call.body));
  const event = apiGatewayEvent({
    method: call.method,
    routeKey: routeKey(match.route),
    pathParameters: match.pathParameters,
    path,
    rawQuery,
    headers,
    cookies: undefined,
    body,
    protocol: 'HTTP/1.1',
    sourceIp: '127.0.0.1',
  });
  const result = await invoke(await handler, event, name, timeoutMs);
  const text = result.body ?? '';
  let parsed: unknown = text;
  try {
    parsed = JSON.parse(text);
  } catch {
    // not JSON: keep the text
  }
  return {
    status: result.statusCode ?? 200,
    headers: (result.headers ?? {}) as Record<string, string>,
    body: parsed,
    resultBytes: Buffer.byteLength(JSON.stringify(result)),
  };
}
