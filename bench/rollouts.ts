/**
 * The fleet rollout benchmark, in a process of its own (bench/rollout-section.ts starts it and reads
 * the JSON this prints), with a twin of its own running the rollout worker: a version rolled out to
 * 1,000 tenants, and a quiet client's API calls alone and during the rollout.
 */
import { createClient } from '#functions/core/clients/clients.ts';
import { db } from '#functions/core/store/dynamo.ts';
import { sqs } from '#functions/core/store/queues.ts';
import { startTwin, type Twin } from '#local/twin.ts';
import { bundleOf } from '#test/support/templates.ts';
import { percentile } from './schedules.ts';
import { twinData } from './twin-api.ts';

export interface RolloutBenchResult {
  tenants: number;
  waveSize: number;
  /** From the rollout's 202 to its `finished`. */
  seconds: number;
  applied: number;
  /** The rollout's requests (planning, waves, applies), per tenant. */
  dynamoPerTenant: number;
  sqsPerTenant: number;
  /** The quiet client's calls (GET /tenants), alone and during the rollout. */
  quietAlone: { calls: number; p50Ms: number; p99Ms: number };
  quietDuring: { calls: number; p50Ms: number; p99Ms: number };
}

const fleetSize = Number(process.env.BENCH_ROLLOUT_TENANTS || 1000);
const waveSize = Math.ceil(fleetSize / 10);
/** The quiet client calls this often. */
const quietEveryMs = 50;
const quietAloneCalls = 200;

const flows = [
  { key: 'load-orders', writes: ['orders'] },
  { key: 'daily', reads: ['orders'], writes: ['daily'] },
];

async function inBatches<T>(count: number, width: number, make: (index: number) => Promise<T>): Promise<T[]> {
  const results: T[] = [];
  for (let start = 0; start < count; start += width) {
    results.push(...(await Promise.all(Array.from({ length: Math.min(width, count - start) }, (_, at) => make(start + at)))));
  }
  return results;
}

/** Counts this process's DynamoDB and SQS requests (the twin's handlers and workers share the clients). */
function countRequests() {
  const counts = { dynamo: 0, sqs: 0 };
  const name = `bench-rollout-${crypto.randomUUID()}`;
  db().middlewareStack.add((next) => (args) => (counts.dynamo++, next(args)), { step: 'initialize', name });
  sqs().middlewareStack.add((next) => (args) => (counts.sqs++, next(args)), { step: 'initialize', name });
  return counts;
}

/** The quiet client's calls, one every `quietEveryMs`, until `until` says stop: each call's time. */
async function quietCalls(twin: Twin, token: string, until: (calls: number) => boolean): Promise<number[]> {
  const times: number[] = [];
  while (!until(times.length)) {
    const started = performance.now();
    await twinData(twin, 'GET', '/tenants?limit=20', token);
    const ms = performance.now() - started;
    times.push(ms);
    await new Promise((resolve) => setTimeout(resolve, Math.max(0, quietEveryMs - ms)));
  }
  return times;
}

const summary = (times: readonly number[]) => ({
  calls: times.length,
  p50Ms: percentile(times, 0.5),
  p99Ms: percentile(times, 0.99),
});

async function measure(twin: Twin): Promise<RolloutBenchResult> {
  const fleet = await createClient(`bench-fleet-${crypto.randomUUID()}`);
  const quiet = await createClient(`bench-quiet-${crypto.randomUUID()}`);
  for (let index = 0; index < 20; index++)
    await twinData(twin, 'POST', '/tenants', quiet.token, { nome: `Quiet ${index}`, ativo: true });
  const template = await twinData(twin, 'POST', '/tenants/templates', fleet.token, bundleOf('Fleet bench', flows));
  process.stderr.write(`  creating ${fleetSize} tenants with the template...\n`);
  await inBatches(fleetSize, 10, (index) =>
    twinData(twin, 'POST', '/tenants', fleet.token, { nome: `Shop ${index}`, ativo: true, templateId: template.id }),
  );
  await twinData(
    twin,
    'PUT',
    `/tenants/templates/${template.id}`,
    fleet.token,
    bundleOf('Fleet bench', [...flows, { key: 'stock', writes: ['stock'] }]),
  );

  process.stderr.write('  the quiet client alone...\n');
  const alone = await quietCalls(twin, quiet.token, (calls) => calls >= quietAloneCalls);

  process.stderr.write(`  rolling version 2 out to ${fleetSize} tenants in waves of ${waveSize}...\n`);
  const counts = countRequests();
  let finished = false;
  const during = quietCalls(twin, quiet.token, () => finished);
  const started = performance.now();
  const rollout = await twinData(twin, 'POST', `/tenants/templates/${template.id}/rollouts`, fleet.token, {
    tenants: 'all',
    waveSize,
  });
  let view = rollout;
  while (view.state === 'running') {
    await new Promise((resolve) => setTimeout(resolve, 250));
    view = await twinData(twin, 'GET', `/tenants/templates/${template.id}/rollouts/${rollout.id}`, fleet.token);
  }
  const seconds = (performance.now() - started) / 1000;
  finished = true;
  const quietTimes = await during;
  // The quiet client's own calls (one token lookup and one Query each) and the polls are not the rollout's.
  const polls = Math.ceil((seconds * 1000) / 250);
  const dynamo = counts.dynamo - 2 * (quietTimes.length + polls);
  return {
    tenants: fleetSize,
    waveSize,
    seconds,
    applied: view.counts.applied,
    dynamoPerTenant: dynamo / fleetSize,
    sqsPerTenant: counts.sqs / fleetSize,
    quietAlone: summary(alone),
    quietDuring: summary(quietTimes),
  };
}

const twin = await startTwin({ port: 0, clock: false, consumers: ['rollout'] });
try {
  process.stdout.write(`${JSON.stringify(await measure(twin))}\n`);
} finally {
  await twin.stop();
}
