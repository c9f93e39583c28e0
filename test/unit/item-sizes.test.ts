import { expect, test } from 'vitest';
import { itemBytes, itemSizes, largestDeliveryItem } from '#bench/item-sizes.ts';
import { dynamoItemBytes } from '#functions/core/aws-limits.ts';

test("an item's size follows DynamoDB's rules: names and values, numbers by significant digits, 3 + 1 per element for lists and maps", () => {
  // 'pk' + 'TENANT#1' = 2 + 8; 'n' + 12345 (5 digits: 3 bytes + 1) = 1 + 4; 'ok' + boolean = 2 + 1.
  expect(itemBytes({ pk: 'TENANT#1', n: 12_345, ok: true })).toBe(10 + 5 + 3);
  // 'é' is 2 bytes in UTF-8; trailing zeroes do not count: 1000 is one significant digit.
  expect(itemBytes({ s: 'é', n: 1000 })).toBe(1 + 2 + 1 + 2);
  // A map: 3, then per element its name, its value and 1; a list: 3, then per element its value and 1.
  expect(itemBytes({ m: { a: 'xy' }, l: ['x', 'yz'] })).toBe(1 + (3 + 1 + 2 + 1) + 1 + (3 + (1 + 1) + (2 + 1)));
  // Attributes left undefined are not written.
  expect(itemBytes({ a: 'x', b: undefined })).toBe(2);
});

test('a run no longer carries the variables: it is a fraction of the run that copied them', () => {
  const sizes = new Map(itemSizes().map((size) => [size.item, size]));
  const pending = sizes.get('run, pending (on its agent’s index)');
  const before = sizes.get('run as written before (copying ~1 KB of variables)');
  expect(pending?.bytes).toBeLessThan(1024);
  expect(before?.bytes).toBeGreaterThan((pending?.bytes ?? 0) + 800);
  for (const size of sizes.values()) expect(size.storedBytes).toBe((size.bytes + 100) * (1 + size.indexEntries));
});

test('a delivery with every attempt it keeps, each to the longest URL with a 1 KB answer, fits in its item with room left', () => {
  const largest = itemSizes().find((size) => size.item === largestDeliveryItem);
  expect(largest?.bytes).toBeGreaterThan(300 * 1024);
  expect(largest?.bytes).toBeLessThan(dynamoItemBytes - 64 * 1024);
});
