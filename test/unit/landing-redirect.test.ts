/**
 * Where the SSO landing redirects, as a property: whatever route a `ref` carries (dot segments,
 * percent-encodings of `.`, `/` and `\` in either case, backslashes, repeated slashes, spaces, tabs,
 * newlines and other control characters), in either Base64 alphabet, padded or not, the Location
 * resolves on the tenant's own origin to a path that does not name another host.
 */
import fc from 'fast-check';
import { describe, expect, test } from 'vitest';
import { decodeRef, type LandingError, safeRedirectTarget } from '#functions/core/sso/landing.ts';
import { resolveSitePath } from '#functions/core/sso/site-path.ts';
import { expectMatch, expectNoMatch, expectSame } from '#test/support/loop-expect.ts';

const tenantOrigins = ['https://acme-1.bi.example.com', 'http://acme-1.localhost:3000'];

const pieces = [
  ...['/', '//', '///', '\\', '\\\\', '/\\', '\\/', '.', '..', './', '../', '/./', '/../'],
  ...['%2e', '%2E', '%2e%2e', '%2E%2e', '%2f', '%2F', '%5c', '%5C', '%252f', '%25', '%'],
  ...[' ', '\t', '\n', '\r', '\u0000', '\u0001', '\u001f', '\u007f', '\u0085', '\u00a0', '\u3000', '\u2028'],
  ...['evil.com', 'evil.com:443', '@evil.com', 'user:pass@', 'http:', 'https:', 'javascript:', '?', '#', '&', '='],
  ...['apps', 'sales', 'a', 'é', '😀', '\uff0f', '\u2215'],
];
const route = fc
  .tuple(fc.constantFrom('/', '', '//', '\\', ' /', '/.', '/%2e'), fc.array(fc.constantFrom(...pieces), { maxLength: 12 }))
  .map(([start, rest]) => start + rest.join(''));

const encodings: Array<[string, (text: string) => string]> = [
  ['standard', (text) => Buffer.from(text).toString('base64')],
  ['standard, unpadded', (text) => Buffer.from(text).toString('base64').replace(/=+$/, '')],
  ['URL-safe', (text) => Buffer.from(text).toString('base64url')],
  ['URL-safe, padded', (text) => Buffer.from(text).toString('base64').replace(/\+/g, '-').replace(/\//g, '_')],
];

/** What a browser does with the Location: resolve it against the page it came from. */
function expectOnTheSite(location: string, what: string) {
  expectMatch(location, /^\/(?![/\\])/, what);
  for (const origin of tenantOrigins) {
    const landed = new URL(location, `${origin}/auth/api/token`);
    expectSame(landed.origin, origin, what);
    expectNoMatch(landed.pathname, /^\/[/\\]/, what);
    const decoded = decodeURIComponent(landed.pathname.replace(/%(?![0-9a-f]{2})/gi, '%25'));
    expectNoMatch(decoded, /^\/[/\\]/, what);
  }
}

describe('the landing redirect', () => {
  test.each(encodings)('never leaves the tenant’s site, whatever the route (%s Base64)', (_alphabet, encode) => {
    fc.assert(
      fc.property(route, fc.constantFrom('0', '1', undefined), (sent, showMenu) => {
        let decoded: string;
        try {
          decoded = decodeRef(encode(sent));
        } catch (error) {
          // Only a route that is not UTF-8 could fail to decode; these all are.
          throw new Error(`${JSON.stringify(sent)} did not decode: ${(error as LandingError).problem}`);
        }
        expectSame(decoded, sent);
        expectOnTheSite(safeRedirectTarget(decoded, { showMenu }), JSON.stringify(sent));
      }),
      { seed: 21, numRuns: 2000 },
    );
  });

  test.each([
    '/.//evil.com',
    '/..//evil.com',
    '/%2e//evil.com',
    '/%2E%2E//evil.com',
    '/a/..//evil.com',
    '/a/%2e%2e//evil.com',
    '/%2f/evil.com',
    '/%2F%2Fevil.com',
    '/%5cevil.com',
    '/%5C%5Cevil.com',
    '/\\evil.com',
    '/.\\/evil.com',
    '/\t/evil.com',
    '/\n/evil.com',
    '/\r\n/evil.com',
    '/%2e%2f/evil.com',
    '//[',
  ])('%j lands on /', (sent) => {
    expect(safeRedirectTarget(sent, {})).toBe('/');
    expect(resolveSitePath(sent)).toBeUndefined();
  });

  test('a route made of plain segments lands where it says', () => {
    const segment = fc.stringMatching(/^[A-Za-z0-9_-]{1,12}$/);
    fc.assert(
      fc.property(
        fc.array(segment, { minLength: 1, maxLength: 6 }),
        fc.option(segment, { nil: undefined }),
        (segments, query) => {
          const sent = `/${segments.join('/')}${query ? `?q=${query}` : ''}`;
          expectSame(safeRedirectTarget(sent, {}), sent);
        },
      ),
      { seed: 21, numRuns: 500 },
    );
  });

  test('dot segments that stay on the site are resolved, not refused', () => {
    expect(safeRedirectTarget('/apps/../sales/./x', {})).toBe('/sales/x');
    expect(safeRedirectTarget('/%2e%2e/sales', {})).toBe('/sales');
  });
});
