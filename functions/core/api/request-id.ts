import type { APIGatewayProxyEventV2 } from 'aws-lambda';

/** The longest `X-Request-Id` a caller may send and have used: longer ones are replaced. */
export const maxCallerRequestIdLength = 128;

/**
 * A caller's `X-Request-Id` the service uses as the request id: 1 to 128 visible ASCII characters
 * (0x21–0x7E). No space, no control character, nothing beyond ASCII: the value is echoed in a
 * header and written in every log line, so it must not be able to split either, nor read as
 * something else once printed. The edge spells the same rule again (functions/edge/viewer-request.js).
 */
export const callerRequestIdPattern = new RegExp(`^[\\x21-\\x7e]{1,${maxCallerRequestIdLength}}$`);

/** API Gateway's own id of the request (`requestContext.requestId`): unique per request, what its access log keeps. */
export const gatewayRequestIdOf = (event: Pick<APIGatewayProxyEventV2, 'requestContext'>): string =>
  event.requestContext?.requestId ?? 'unknown';

/**
 * The request id an answer echoes (`x-request-id`), the error envelope carries, every log line of the
 * request and what it creates (deliveries, runs) keep: the caller's `X-Request-Id` when it follows
 * `callerRequestIdPattern`, else (absent, empty, too long, any other character) API Gateway's own.
 * A caller's value is only a label to find the request by: it is not unique (any caller may send any
 * value), so nothing that must be unique (a deduplication id, an idempotency key) is ever made of it.
 */
export function requestIdOf(event: Pick<APIGatewayProxyEventV2, 'headers' | 'requestContext'>): string {
  const sent = event.headers?.['x-request-id'];
  return sent !== undefined && callerRequestIdPattern.test(sent) ? sent : gatewayRequestIdOf(event);
}
