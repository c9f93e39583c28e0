/**
 * The burst benchmark, in a process of its own (bench/run.ts starts it and reads the JSON this
 * prints): a twin serves one process, whose functions read their configuration and create their
 * AWS clients once, as on Lambda. Its twin runs only the fire worker: the loads the fires queue
 * wait in the reload queue, as on AWS they go to other functions, so the machine's cores measure
 * the fire path alone (the reload worker's cost is in the operations table). The bench ticks at
 * each burst's minute itself.
 */
import { startTwin } from '#local/twin.ts';
import { measureBursts } from './schedules.ts';

const twin = await startTwin({ port: 0, clock: false, consumers: ['fire'] });
try {
  process.stderr.write('  measuring bursts of 100, 1,000 and 10,000 schedules due in one minute (about 5 minutes)...\n');
  process.stdout.write(`${JSON.stringify(await measureBursts(twin))}\n`);
} finally {
  await twin.stop();
}
