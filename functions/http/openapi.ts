import type { APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2 } from 'aws-lambda';
import document from '../../docs/openapi.json' with { type: 'json' };
import { requestIdOf } from '#functions/core/api/request-id.ts';

const body = JSON.stringify(document);

/**
 * GET /openapi.json: the committed document (`npm run docs` writes it; a unit test keeps it equal
 * to what the route table and the schemas give). Static and public, so it does without
 * httpHandler: there is no token to look up, no body to parse, nothing that can fail, and
 * httpHandler's authentication (the DynamoDB client) would take the bundle from ~110 KB to over
 * the 500 KB budget of bench/bundles.ts.
 */
export const handler = async (event: APIGatewayProxyEventV2): Promise<APIGatewayProxyStructuredResultV2> => ({
  statusCode: 200,
  headers: {
    'content-type': 'application/json; charset=utf-8',
    'cache-control': 'public, max-age=300',
    'x-content-type-options': 'nosniff',
    'x-request-id': requestIdOf(event),
  },
  body,
});
