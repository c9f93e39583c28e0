import { expect, test } from 'vitest';
import { accessLine, redactedTarget } from '#local/access-log.ts';

const loginJwt =
  'eyJhbGciOiJFUzI1NiIsImtpZCI6ImsxIiwidHlwIjoiSldUIn0.eyJzdWIiOiIxIiwibG9naW4iOiJhbmFAYWNtZS5jb20ifQ.c2lnbmF0dXJlX19fX19fX19fX19fX19fX19fXw';

test("the SSO landing's login token never reaches the twin's access line", () => {
  const line = accessLine('GET', `/auth/api/${loginJwt}?ref=L2FwcHMvc2FsZXM=&showMenu=0`, 302, 12);
  expect(line).toBe('GET /auth/api/[redacted]?ref=L2FwcHMvc2FsZXM=&showMenu=0 302 12ms');
  // Whatever the token looks like: it is the segment's place that makes it secret.
  expect(redactedTarget('/auth/api/not-even-a-jwt')).toBe('/auth/api/[redacted]');
  expect(redactedTarget('/auth/api/a%2Fb')).toBe('/auth/api/[redacted]');
});

test('a token anywhere else in the path or the query, or a query parameter named like a credential, is redacted', () => {
  expect(redactedTarget(`/x/${loginJwt}/y`)).toBe('/x/[redacted]/y');
  expect(redactedTarget('/tenants/ten_abcdefghijklmnopqrstuv/users')).toBe('/tenants/[redacted]/users');
  expect(redactedTarget(`/q?next=${encodeURIComponent(loginJwt)}&limit=5`)).toBe('/q?next=[redacted]&limit=5');
  expect(redactedTarget('/q?access_token=abc&session=def&api_key=ghi&cursor=xyz')).toBe(
    '/q?access_token=[redacted]&session=[redacted]&api_key=[redacted]&cursor=xyz',
  );
});

test('everything else is shown as it was asked for', () => {
  expect(redactedTarget('/tenants?limit=5&cursor=eyJwayI6IlRFTkFOVCMxIn0')).toBe(
    '/tenants?limit=5&cursor=eyJwayI6IlRFTkFOVCMxIn0',
  );
  expect(redactedTarget('/tenant/schedules/42')).toBe('/tenant/schedules/42');
  expect(redactedTarget('//double/slash')).toBe('//double/slash');
  expect(accessLine(undefined, undefined, 404, 1)).toBe('? / 404 1ms');
});
