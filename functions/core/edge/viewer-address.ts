import type { APIGatewayProxyEventV2 } from 'aws-lambda';

/**
 * Set (`true`) by the stack, and by the twin's `--edge`, when every request comes through the edge (the
 * origin check refuses the rest): only then is `CloudFront-Viewer-Address` CloudFront's, not the caller's.
 */
export const behindEdgeVariable = 'BEHIND_EDGE';

/**
 * The caller's address: behind the edge, what CloudFront saw (`CloudFront-Viewer-Address`, `ip:port`,
 * which the API's access log cannot show: there `ip` is CloudFront's); else the connection's, whatever
 * header the caller made up.
 */
export function viewerAddressOf(
  event: Pick<APIGatewayProxyEventV2, 'headers' | 'requestContext'>,
  behindEdge = process.env[behindEdgeVariable] === 'true',
): string | undefined {
  const viewer = behindEdge ? event.headers?.['cloudfront-viewer-address'] : undefined;
  const address = viewer ? viewer.slice(0, Math.max(0, viewer.lastIndexOf(':'))) : event.requestContext?.http?.sourceIp;
  // An address, IPv4 or IPv6, and nothing a caller could dress up as another field of the line.
  return address && /^[0-9A-Fa-f.:]{2,45}$/.test(address) ? address : undefined;
}
