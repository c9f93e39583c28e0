/**
 * The noisy-neighbour benchmark, in a process of its own (bench/noisy-section.ts starts it and reads
 * the JSON this prints), with a twin of its own running the webhook deliverer and the fire worker
 * with the production retry schedule and breaker: a twin serves one process. The bench ticks the
 * dispatcher at each slot itself.
 */
import { startTwin } from '#local/twin.ts';
import { measureNoisySchedules, measureNoisyWebhooks, type NoisyResult } from './noisy-neighbours.ts';

const twin = await startTwin({ port: 0, clock: false, consumers: ['webhook', 'fire'] });
try {
  process.stderr.write('  measuring noisy neighbours: webhooks (about 4 minutes), then schedules (about 8 minutes)...\n');
  const result: NoisyResult = { webhooks: await measureNoisyWebhooks(twin), schedules: await measureNoisySchedules(twin) };
  process.stdout.write(`${JSON.stringify(result)}\n`);
} finally {
  await twin.stop();
}
