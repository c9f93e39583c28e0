import { expect, test } from 'vitest';
import { issueInstant, voidUntil } from '#functions/core/sso/revocation.ts';

const second = 1_800_000_000;
const ms = second * 1000;

test('milliseconds stamps are compared as they are; none is nothing void', () => {
  expect(voidUntil({}, {})).toBeUndefined();
  expect(voidUntil({}, { revokedAtMs: ms + 500 })).toBe(ms + 500);
  expect(voidUntil({ sessionsValidAfterMs: ms + 700 }, { revokedAtMs: ms + 500 })).toBe(ms + 700);
});

test('seconds stamps keep their meaning: revokedBefore S voids before second S, sessionsValidAfter V up to the end of V', () => {
  expect(voidUntil({}, { revokedBefore: second })).toBe(ms - 1);
  expect(voidUntil({ sessionsValidAfter: second }, {})).toBe(ms + 999);
});

test('a seconds stamp that shadows the milliseconds one beside it is not read; a newer one is', () => {
  // As one revoke of this version writes them: the instant and the next second.
  expect(voidUntil({}, { revokedAtMs: ms + 500, revokedBefore: second + 1 })).toBe(ms + 500);
  // A revoke of the previous version (during a deploy), later than this version's.
  expect(voidUntil({}, { revokedAtMs: ms + 500, revokedBefore: second + 2 })).toBe(ms + 1999);
  expect(voidUntil({ sessionsValidAfterMs: ms + 500, sessionsValidAfter: second }, {})).toBe(ms + 500);
  expect(voidUntil({ sessionsValidAfterMs: ms + 500, sessionsValidAfter: second + 1 }, {})).toBe(ms + 1999);
});

test('what is issued is issued after the stamp it read, even on a clock behind', () => {
  expect(issueInstant(ms, undefined)).toBe(ms);
  expect(issueInstant(ms, ms - 1)).toBe(ms);
  expect(issueInstant(ms, ms)).toBe(ms + 1);
  expect(issueInstant(ms, ms + 40)).toBe(ms + 41);
});
