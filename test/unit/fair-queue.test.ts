import { describe, expect, test } from 'vitest';
import { fairOrder, noisyTenants } from '#local/fair-queue.ts';

const counts = (entries: Record<string, number>) => new Map(Object.entries(entries));

describe('noisy tenants (SQS fair queues)', () => {
  test('more than 10% of the messages in flight, and at least 30 of them', () => {
    expect(noisyTenants(counts({ a: 30, b: 70 }), new Map())).toEqual(new Set(['a', 'b']));
    expect(noisyTenants(counts({ a: 29, b: 1 }), new Map())).toEqual(new Set());
    // 40 in flight but 8% of them: not disproportionate.
    expect(noisyTenants(counts({ a: 40, b: 460 }), new Map())).toEqual(new Set(['b']));
  });

  test('or more than 10% of the recent processing time, however few its messages', () => {
    expect(noisyTenants(counts({ a: 1, b: 20 }), counts({ a: 10_000, b: 500 }))).toEqual(new Set(['a']));
  });
});

describe('fair order', () => {
  const waiting = [
    { group: 'a', id: 1 },
    { group: 'a', id: 2 },
    { group: 'b', id: 3 },
    { group: 'c', id: 4 },
    { group: 'a', id: 5 },
    { group: 'd', id: 6 },
  ];

  test('without noisy tenants, oldest first', () => {
    expect(fairOrder(waiting, new Set(), new Map(), 3).map((entry) => entry.id)).toEqual([1, 2, 3]);
  });

  test("quiet tenants' messages first; a noisy tenant's wait while any other's does", () => {
    expect(fairOrder(waiting, new Set(['a']), counts({ a: 50 }), 3).map((entry) => entry.id)).toEqual([3, 4, 6]);
    expect(fairOrder(waiting, new Set(['a']), counts({ a: 50 }), 5).map((entry) => entry.id)).toEqual([3, 4, 6, 1, 2]);
  });

  test('among noisy tenants, the one with the fewest messages in flight first', () => {
    const noisy = new Set(['a', 'c']);
    expect(fairOrder(waiting, noisy, counts({ a: 50, c: 31 }), 6).map((entry) => entry.id)).toEqual([3, 6, 4, 1, 2, 5]);
  });
});
