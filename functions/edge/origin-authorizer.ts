/**
 * The HTTP API's one authorizer, with the edge on: a request reaches a route's function only if it
 * came through CloudFront, which adds the origin secret in `x-origin-verify` (lib/edge-distributions.ts).
 * API Gateway answers 401 itself, without calling this, when the header is missing (it is the
 * authorizer's identity source), and caches this function's answer per header value for five minutes,
 * so it runs about once per value and API Gateway instance. It holds no tenant decision: each route's
 * handler still authenticates its caller (DESIGN.md section 2).
 */
import type { APIGatewayRequestAuthorizerEventV2, APIGatewaySimpleAuthorizerResult } from 'aws-lambda';
import { ORIGIN_HEADER, cameThroughTheEdge } from '#functions/core/edge/origin-secret.ts';

export async function handler(event: APIGatewayRequestAuthorizerEventV2): Promise<APIGatewaySimpleAuthorizerResult> {
  return { isAuthorized: await cameThroughTheEdge(event.headers?.[ORIGIN_HEADER]) };
}
