import { expect, test } from 'vitest';
import { checkIfMatch } from '#functions/core/api/if-match.ts';
import { ServiceError } from '#functions/core/errors.ts';

const outcome = (ifMatch: string | undefined, current: string | undefined) => {
  try {
    checkIfMatch(ifMatch, current, 'schedule');
    return 'proceeds';
  } catch (error) {
    if (error instanceof ServiceError) return `${error.status} ${error.code}`;
    throw error;
  }
};

test('the current strong ETag, alone or in a list, or * on a record that exists, lets the write proceed', () => {
  expect(outcome(undefined, '"3"')).toBe('proceeds');
  expect(outcome('"3"', '"3"')).toBe('proceeds');
  expect(outcome('"1", "3"', '"3"')).toBe('proceeds');
  expect(outcome('*', '"3"')).toBe('proceeds');
});

test('a weak tag never matches (strong comparison, RFC 9110 13.1.1), nor another version, nor * on nothing', () => {
  for (const [ifMatch, current] of [
    ['W/"3"', '"3"'],
    ['W/"1", W/"3"', '"3"'],
    ['"2"', '"3"'],
    ['3', '"3"'],
    ['*', undefined],
    ['"3"', undefined],
  ] as const) {
    expect(outcome(ifMatch, current), ifMatch).toBe('412 version_mismatch');
  }
});
