import { expect, test } from 'vitest';
import { listAnswer, maxResultBytes } from '#functions/core/api/whole-list.ts';
import { ServiceError } from '#functions/core/errors.ts';

const items = (count: number, bytes: number) =>
  Array.from({ length: count }, (_, index) => ({ id: index, text: 'x'.repeat(bytes) }));

test('without limit: every item in the spec’s shape; with it: a page and nextCursor', () => {
  expect(listAnswer({ items: items(2, 1), nextCursor: null }, undefined)).toEqual({ status: 'success', data: items(2, 1) });
  expect(listAnswer({ items: items(2, 1), nextCursor: 'next' }, 2)).toEqual({
    status: 'success',
    data: items(2, 1),
    nextCursor: 'next',
  });
});

test('an answer past Lambda’s result limit is a 400 naming limit, counted as the body travels (escaped once more)', () => {
  // A line break is 2 bytes in the body's JSON and 3 once the body is escaped inside the result:
  // under the limit as JSON, over it as it travels.
  const breaks = '\n'.repeat(Math.floor(maxResultBytes * 0.36));
  expect(JSON.stringify({ status: 'success', data: [{ text: breaks }] }).length).toBeLessThan(maxResultBytes);
  const list = { items: [{ text: breaks }], nextCursor: null };
  const tooLarge = (call: () => unknown) => {
    try {
      call();
    } catch (error) {
      return error;
    }
    throw new Error('no error');
  };
  const whole = tooLarge(() => listAnswer(list, undefined));
  expect(whole).toBeInstanceOf(ServiceError);
  expect(whole).toMatchObject({ status: 400, code: 'answer_too_large', errors: [{ location: 'query', pointer: '/limit' }] });
  // One item, too large alone: no limit can help (1 is the smallest), and the message says so.
  expect((whole as Error).message).toMatch(/^The whole list \(1 item, 6\.5 MB\).*its first item alone is/);
  const page = tooLarge(() => listAnswer(list, 1));
  expect((page as Error).message).toMatch(/^This page \(1 item.*alone is/);
  expect((page as Error).message).not.toMatch(/smaller limit/);
});
