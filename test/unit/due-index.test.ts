import { describe, expect, test } from 'vitest';
import { dispatchSettings } from '#functions/core/schedules/dispatch-settings.ts';
import { fireMessages, schedulesPerMessage } from '#functions/core/schedules/dispatcher.ts';
import type { FireMessage } from '#functions/core/schedules/fire.ts';
import { dueIndexEntry, shardBlockSize, shardOf } from '#functions/core/schedules/schedule-repository.ts';

describe('due-index shards', () => {
  test("a block of a tenant's schedule ids shares a shard", () => {
    const shards = new Set(Array.from({ length: shardBlockSize - 1 }, (_, index) => shardOf(42, index + 1)));
    expect(shards.size).toBe(1);
  });

  test("within an instant a shard lists its entries in turns, so a big tenant's cannot fill the pages before the others'", () => {
    const instant = '2026-03-01T08:00:00.000Z';
    const entry = (tenantId: number, scheduleId: number) => ({ tenantId, ...dueIndexEntry(tenantId, scheduleId, instant) });
    // Tenant 1 (sorting first by id) has a whole block due; tenants 2 to 21 have three each.
    const big = Array.from({ length: shardBlockSize - 1 }, (_, index) => entry(1, index + 1));
    const small = Array.from({ length: 20 }, (_, tenant) => [1, 2, 3].map((id) => entry(tenant + 2, id))).flat();
    const listed = [...big, ...small].sort((a, b) => (a.gsi1sk < b.gsi1sk ? -1 : a.gsi1sk > b.gsi1sk ? 1 : 0));
    // Every small tenant's schedules come within the first three turns: 3 × 21 entries.
    const lastSmall = Math.max(...listed.flatMap((listedEntry, index) => (listedEntry.tenantId === 1 ? [] : [index])));
    expect(lastSmall).toBeLessThan(3 * 21);
    // And the instant still orders first: an earlier instant's entry of any turn sorts before.
    expect(dueIndexEntry(9, shardBlockSize - 1, '2026-03-01T07:59:00.000Z').gsi1sk < (listed[0]?.gsi1sk ?? '')).toBe(true);
  });

  test('a tenant with thousands of schedules is spread over every shard', () => {
    const { dueShards } = dispatchSettings();
    const ids = Array.from({ length: dueShards * shardBlockSize }, (_, index) => index + 1);
    const perShard = new Map<number, number>();
    for (const id of ids) perShard.set(shardOf(42, id), (perShard.get(shardOf(42, id)) ?? 0) + 1);
    expect(perShard.size).toBe(dueShards);
    expect(Math.max(...perShard.values())).toBeLessThanOrEqual(shardBlockSize);
  });
});

describe('fire messages', () => {
  test("each message is one tenant's (its message group), at most ten schedules, the tenants with fewest first", () => {
    const due = (tenantId: number, scheduleId: number) => ({ tenantId, scheduleId, dueAt: '2026-03-01T08:00:00.000Z' });
    const page = [...Array.from({ length: 12 }, (_, index) => due(1, index + 1)), due(2, 1), due(1, 13), due(3, 1)];
    const messages = fireMessages(page, 1000, 2000);
    expect(
      messages.map((message) => [message.tenantId, (message.body as FireMessage).schedules.map((s) => s.scheduleId)]),
    ).toEqual([
      [2, [1]],
      [3, [1]],
      [1, [1, 2, 3, 4, 5, 6, 7, 8, 9, 10]],
      [1, [11, 12, 13]],
    ]);
    for (const message of messages) {
      const body = message.body as FireMessage;
      expect(body).toMatchObject({ now: 1000, startedAt: 2000 });
      expect(body.schedules.length).toBeLessThanOrEqual(schedulesPerMessage);
      expect(body.schedules.every((schedule) => schedule.tenantId === message.tenantId)).toBe(true);
    }
  });
});
