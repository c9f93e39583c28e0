/**
 * The twin's clock: a twin of its own (the shared test twin runs without it), started as
 * `npm start -- --in-memory` does, and the README's schedule session run against it as written.
 */
import { parse } from 'yaml';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { runReadmeSession } from '#test/support/readme.ts';
import { startTwinProcess, type TwinProcess } from '#test/support/processes.ts';

let twin: TwinProcess;
beforeAll(async () => {
  twin = await startTwinProcess(['--in-memory'], { LOCAL_CLIENT_TOKEN: `cli_clock_${crypto.randomUUID()}` });
});
afterAll(async () => {
  twin.child.kill('SIGTERM');
  await twin.exited;
});

test('the README schedule session: the clock fires the schedule within a minute and its flows are enqueued', async () => {
  const output = await runReadmeSession('schedules', twin);
  const lines = output.trim().split('\n');
  const [patched, put, next, runs] = lines.slice(0, 4).map((line) => JSON.parse(line));
  expect(patched.data).toMatchObject({ nome: 'Delta', schedulingGranularity: 'minutes' });
  expect(put.data.body).toMatchObject({ nome: 'Every minute', version: 1 });
  const fires = next.data.fires as Array<{ utc: string }>;
  expect(fires.map((fire) => Date.parse(fire.utc) % 60_000)).toEqual([0, 0, 0]);
  expect(Date.parse(fires[1]?.utc ?? '') - Date.parse(fires[0]?.utc ?? '')).toBe(60_000);
  const [run] = runs.data;
  expect(run).toMatchObject({ status: 'fired', scheduleVersion: 1 });
  expect(run.flows).toEqual([
    { flowId: 1, context: 'full', tokenId: 1, status: 'enqueued' },
    { flowId: 2, context: 'incremental', tokenId: 1, status: 'enqueued' },
  ]);
  expect(Date.parse(run.slot) % 60_000).toBe(0);
  const file = parse(lines.slice(4).join('\n'));
  expect(file.body).toMatchObject({ nome: 'Every minute', version: 1, timezone: 'Europe/Berlin' });
}, 150_000);
