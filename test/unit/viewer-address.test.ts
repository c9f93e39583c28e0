/**
 * The caller's address in each request's log line: behind the edge, CloudFront's
 * CloudFront-Viewer-Address (`ip:port`, IPv6 without brackets), else the connection's; never text a
 * caller could make look like another field.
 */
import { expect, test } from 'vitest';
import { viewerAddressOf } from '#functions/core/edge/viewer-address.ts';

const event = (headers: Record<string, string>, sourceIp = '130.176.1.1') =>
  ({ headers, requestContext: { http: { sourceIp } } }) as unknown as Parameters<typeof viewerAddressOf>[0];

test('behind the edge, the viewer CloudFront saw, without its port', () => {
  expect(viewerAddressOf(event({ 'cloudfront-viewer-address': '198.51.100.10:46532' }), true)).toBe('198.51.100.10');
  expect(viewerAddressOf(event({ 'cloudfront-viewer-address': '2001:0db8:0000:0000:0000:ff00:0042:8329:46532' }), true)).toBe(
    '2001:0db8:0000:0000:0000:ff00:0042:8329',
  );
});

test('without the edge, the connection’s address, whatever the caller says it is', () => {
  expect(viewerAddressOf(event({}, '203.0.113.9'), false)).toBe('203.0.113.9');
  expect(viewerAddressOf(event({ 'cloudfront-viewer-address': '198.51.100.10:46532' }, '203.0.113.9'), false)).toBe(
    '203.0.113.9',
  );
});

test('anything that is not an address is left out', () => {
  expect(viewerAddressOf(event({ 'cloudfront-viewer-address': '1.2.3.4", "admin": true, "x":"1' }), true)).toBeUndefined();
  expect(viewerAddressOf(event({ 'cloudfront-viewer-address': 'no-port' }), true)).toBeUndefined();
});
