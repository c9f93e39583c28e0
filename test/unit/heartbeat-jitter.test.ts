/**
 * Heartbeats spread: agents started on the same second drift apart within a few beats, and the
 * longest interval the service may ask for still keeps an agent online.
 */
import { readFileSync } from 'node:fs';
import { expect, test } from 'vitest';
import { heartbeatIntervalSeconds, nextHeartbeatSeconds, onlineWindowMs } from '#functions/core/agents/agents.ts';

const bounds = {
  min: Math.round(heartbeatIntervalSeconds.typical * (1 - heartbeatIntervalSeconds.jitter)),
  max: Math.round(heartbeatIntervalSeconds.typical * (1 + heartbeatIntervalSeconds.jitter)),
};

test('every interval is within the documented bounds, and the longest keeps the agent online', () => {
  expect(nextHeartbeatSeconds(() => 0)).toBe(bounds.min);
  expect(nextHeartbeatSeconds(() => 0.999999)).toBe(bounds.max);
  for (let i = 0; i < 1000; i++) {
    const seconds = nextHeartbeatSeconds();
    expect(Number.isInteger(seconds)).toBe(true);
    expect(seconds).toBeGreaterThanOrEqual(bounds.min);
    expect(seconds).toBeLessThanOrEqual(bounds.max);
  }
  expect(bounds.max * 1000).toBeLessThan(onlineWindowMs);
  const schema = JSON.parse(readFileSync('schemas/responses/heartbeat.schema.json', 'utf8')) as {
    properties: { nextHeartbeatInSeconds: { minimum: number; maximum: number } };
  };
  expect(schema.properties.nextHeartbeatInSeconds).toMatchObject({ minimum: bounds.min, maximum: bounds.max });
});

test('400 agents started on the same second no longer beat together after a few beats', () => {
  // A seeded generator, so the model is the same on every run.
  let seed = 2026;
  const random = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
  const agents = 400;
  const nextBeat = Array.from({ length: agents }, () => 0);
  const peakPerSecond = (beat: number) => {
    for (let i = 0; i < agents; i++) nextBeat[i] = (nextBeat[i] ?? 0) + nextHeartbeatSeconds(random);
    const perSecond = new Map<number, number>();
    for (const at of nextBeat) perSecond.set(at, (perSecond.get(at) ?? 0) + 1);
    return { beat, peak: Math.max(...perSecond.values()) };
  };
  const peaks = [1, 2, 3, 4, 5].map(peakPerSecond);
  // A fixed interval would keep all 400 on one second at every beat; 25 distinct seconds at least share them now.
  expect(peaks[0]?.peak).toBeLessThan(agents / 10);
  expect(peaks[4]?.peak).toBeLessThan(agents / 20);
});
