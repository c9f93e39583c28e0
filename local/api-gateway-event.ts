import { isUtf8 } from 'node:buffer';
import { randomUUID } from 'node:crypto';
import type { APIGatewayProxyEventV2 } from 'aws-lambda';

/** One HTTP request as the gateway received it, with the key of the route it matched (`$default`: none). */
export interface GatewayRequest {
  method: string;
  routeKey: string;
  pathParameters: Record<string, string>;
  /** Path as sent, without the query string. */
  path: string;
  /** The query string as sent, without `?`. */
  rawQuery: string;
  /** Header names in lower case, as Node.js gives them (the cookie header apart). */
  headers: Record<string, string>;
  cookies: string[] | undefined;
  body: Buffer;
  protocol: string;
  sourceIp: string;
}

/** HTTP APIs pass text bodies as they are and base64-encode the rest (and anything not UTF-8). */
function isTextual(contentType: string | undefined): boolean {
  const mediaType = (contentType ?? '').split(';')[0]?.trim().toLowerCase() ?? '';
  return /^text\/|^application\/(?:[\w.+-]+\+)?(?:json|yaml|xml|x-www-form-urlencoded)$/.test(mediaType);
}

/** The payload-v2 event API Gateway's HTTP API hands a route's function for this request. */
export function apiGatewayEvent(request: GatewayRequest): APIGatewayProxyEventV2 {
  const { headers, body } = request;
  const query: Record<string, string> = {};
  for (const [name, value] of new URLSearchParams(request.rawQuery)) {
    query[name] = Object.hasOwn(query, name) ? `${query[name]},${value}` : value;
  }
  const textual = isTextual(headers['content-type']) && isUtf8(body);
  const now = new Date();
  return {
    version: '2.0',
    routeKey: request.routeKey,
    rawPath: request.path,
    rawQueryString: request.rawQuery,
    cookies: request.cookies,
    headers,
    queryStringParameters: Object.keys(query).length > 0 ? query : undefined,
    pathParameters: Object.keys(request.pathParameters).length > 0 ? request.pathParameters : undefined,
    requestContext: {
      accountId: 'local',
      apiId: 'local',
      domainName: headers.host ?? 'localhost',
      domainPrefix: (headers.host ?? 'localhost').split('.')[0] ?? 'localhost',
      http: {
        method: request.method,
        path: request.path,
        protocol: request.protocol,
        sourceIp: request.sourceIp,
        userAgent: headers['user-agent'] ?? '',
      },
      requestId: randomUUID(),
      routeKey: request.routeKey,
      stage: '$default',
      time: now.toUTCString(),
      timeEpoch: now.getTime(),
    },
    body: body.length === 0 ? undefined : body.toString(textual ? 'utf8' : 'base64'),
    isBase64Encoded: body.length > 0 && !textual,
  };
}

/**
 * The bytes of `event` as Lambda counts them against its synchronous payload limit: its JSON. How API
 * Gateway serialises the event is not documented, so the twin counts the most it could be: every
 * character beyond ASCII escaped as `\uXXXX` (6 bytes a UTF-16 unit), as a strict JSON writer does.
 */
export function eventBytes(event: APIGatewayProxyEventV2): number {
  const json = JSON.stringify(event);
  let bytes = json.length;
  for (let index = 0; index < json.length; index++) if (json.charCodeAt(index) > 0x7f) bytes += 5;
  return bytes;
}
