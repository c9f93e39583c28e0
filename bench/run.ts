/**
 * `npm run bench`: latency of a few routes on the local twin, and the size of every function's
 * bundle. A report to compare between runs (bench/results.json), not a test: nothing here fails
 * on a slow number.
 */
import { writeFile } from 'node:fs/promises';
import { cpus, loadavg } from 'node:os';
import { relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { startTwin } from '../local/twin.ts';
import { type BundleSize, bundleBudgetBytes, measureBundles } from './bundles.ts';
import { type LatencyCase, type LatencyResult, type LatencySettings, measureLatency, warmUp } from './latency.ts';
import { fixed, formatTable, ratio } from './table.ts';
import { type DeliveryResult, measureDeliveries } from './alerts.ts';
import { type EngineResult, measureDispatcherTicks, measureTriggerEngine, type TickResult } from './schedules.ts';
import { measureTemplateOperations, type OperationResult } from './templates.ts';

const projectRoot = fileURLToPath(new URL('..', import.meta.url));
const resultsFile = fileURLToPath(new URL('results.json', import.meta.url));

// startTwin points process.env at its emulators (fake AWS credentials among them); cdk synth must
// see the caller's environment, not those.
const callerEnvironment = { ...process.env };

function positiveIntegerFromEnv(name: string, fallback: number): number {
  const raw = process.env[name];
  if (raw === undefined || raw === '') return fallback;
  const value = Number(raw);
  if (!Number.isInteger(value) || value < 1) throw new Error(`${name} must be a positive integer, not "${raw}"`);
  return value;
}

/**
 * DynamoDB Local is a JVM: its first few thousand requests run interpreted and are several times
 * slower (whoami's p50 fell from ~70 ms to ~11 ms over its first 3,500 requests), which would
 * make whichever route runs first look slowest. So every route is exercised this many times
 * before any is measured, on top of each route's own short warm-up.
 */
const twinWarmupRequestsPerRoute = 1000;

const settings: LatencySettings = {
  requests: positiveIntegerFromEnv('BENCH_REQUESTS', 2000),
  connections: positiveIntegerFromEnv('BENCH_CONNECTIONS', 10),
  warmupRequests: 200,
};
// autocannon splits the requests over the connections and refuses to leave a connection idle.
if (settings.requests < settings.connections) {
  throw new Error(`BENCH_REQUESTS (${settings.requests}) must be at least BENCH_CONNECTIONS (${settings.connections})`);
}

const templateSettings = { resources: 500, reloadItems: 100, runs: positiveIntegerFromEnv('BENCH_APPLY_RUNS', 5) };

const json = (token: string) => ({ 'content-type': 'application/json', authorization: `Bearer ${token}` });

/** The tenant every tenant-token benchmark authenticates as. */
async function createBenchTenant(url: string, clientToken: string): Promise<string> {
  const response = await fetch(`${url}/tenants`, {
    method: 'POST',
    headers: json(clientToken),
    body: JSON.stringify({ nome: 'Bench', ativo: true }),
  });
  const body = (await response.json()) as { data?: { token?: string } };
  if (response.status !== 201 || !body.data?.token) {
    throw new Error(`Could not create the bench tenant: ${response.status} ${JSON.stringify(body)}`);
  }
  return body.data.token;
}

/** The first case is the baseline: only the token lookup, which every authenticated route pays. */
function latencyCases(clientToken: string, tenantToken: string): LatencyCase[] {
  return [
    { name: 'baseline', method: 'GET', path: '/whoami', headers: json(tenantToken) },
    { name: 'get tenant', method: 'GET', path: '/tenant', headers: json(tenantToken) },
    {
      name: 'create tenant',
      method: 'POST',
      path: '/tenants',
      headers: json(clientToken),
      body: JSON.stringify({ nome: 'Bench Load', ativo: true }),
    },
  ];
}

/** One twin for every benchmark: the functions' clients are per-process singletons, as on Lambda. */
async function runTwinBenchmarks(): Promise<{
  latency: LatencyResult[];
  templates: OperationResult[];
  ticks: TickResult[];
  deliveries: DeliveryResult;
}> {
  // The dispatcher is ticked by the bench itself, at chosen instants.
  const twin = await startTwin({ port: 0, clock: false });
  try {
    const tenantToken = await createBenchTenant(twin.url, twin.clientToken);
    const cases = latencyCases(twin.clientToken, tenantToken);
    process.stderr.write(`  warming up the twin (${twinWarmupRequestsPerRoute} requests per route)...\n`);
    for (const testCase of cases) await warmUp(twin.url, testCase, twinWarmupRequestsPerRoute, settings.connections);
    const results: LatencyResult[] = [];
    for (const testCase of cases) {
      process.stderr.write(`  measuring ${testCase.method} ${testCase.path}...\n`);
      results.push(await measureLatency(twin.url, testCase, settings));
    }
    process.stderr.write('  measuring template apply and reload...\n');
    const templates = await measureTemplateOperations(twin, templateSettings);
    process.stderr.write('  measuring dispatcher ticks (writing 10,000 schedules)...\n');
    const ticks = await measureDispatcherTicks(twin);
    process.stderr.write('  measuring webhook deliveries...\n');
    return { latency: results, templates, ticks, deliveries: await measureDeliveries(twin) };
  } finally {
    await twin.stop();
  }
}

function printLatency(results: readonly LatencyResult[]): void {
  const [baseline] = results;
  if (!baseline) return;
  console.log(
    `Latency (local twin, ${settings.requests} requests over ${settings.connections} connections, ` +
      `after ${twinWarmupRequestsPerRoute} warm-up requests per route, then ${settings.warmupRequests} more right before each)\n`,
  );
  const rows = results.map((result) => [
    result.name,
    `${result.method} ${result.path}`,
    result.requests,
    result.non2xx,
    fixed(result.p50Ms, 2),
    fixed(result.p99Ms, 2),
    fixed(result.requestsPerSecond, 0),
    ratio(result.p50Ms, baseline.p50Ms),
    ratio(result.p99Ms, baseline.p99Ms),
  ]);
  console.log(
    formatTable(['benchmark', 'route', 'requests', 'non-2xx', 'p50 ms', 'p99 ms', 'req/s', 'p50 vs base', 'p99 vs base'], rows),
  );
  for (const result of results) {
    if (result.non2xx > 0 || result.errors > 0) {
      console.log(
        `WARNING: ${result.method} ${result.path} had ${result.non2xx} non-2xx answers and ${result.errors} ` +
          `unanswered requests (status codes: ${JSON.stringify(result.statusCodes)}); its numbers are not comparable.`,
      );
    }
  }
}

const kilobytes = (bytes: number) => bytes / 1024;

function printBundles(bundles: readonly BundleSize[]): void {
  console.log(`\nBundle sizes (index.mjs of each function, minified, 1 KB = 1024 bytes)\n`);
  const rows = [...bundles]
    .sort((a, b) => b.bytes - a.bytes)
    .map((bundle) => [
      bundle.functionId,
      fixed(kilobytes(bundle.bytes), 1),
      bundle.overBudget ? `over budget (${kilobytes(bundleBudgetBytes)} KB)` : '',
    ]);
  console.log(formatTable(['function', 'KB', ''], rows));
}

function printTemplateOperations(results: readonly OperationResult[]): void {
  console.log(
    `\nTemplate apply, reload and datamart listing (local twin, median of ${templateSettings.runs} tenants; round trips = DynamoDB requests)\n`,
  );
  const rows = results.map((result) => [result.operation, fixed(result.medianMs, 1), fixed(result.maxMs, 1), result.roundTrips]);
  console.log(formatTable(['operation', 'median ms', 'max ms', 'round trips'], rows));
}

function printSchedules(ticks: readonly TickResult[], engine: readonly EngineResult[]): void {
  console.log('\nDispatcher tick (local twin; round trips = DynamoDB requests; each due schedule starts 2 flows)\n');
  const [first] = ticks;
  const rows = ticks.map((tick) => [
    tick.schedules,
    tick.due,
    tick.fired,
    fixed(tick.ms, 1),
    tick.roundTrips,
    first ? ratio(tick.ms, first.ms) : '',
  ]);
  console.log(formatTable(['schedules', 'due', 'fired', 'ms', 'round trips', 'ms vs first'], rows));
  console.log('\nTrigger engine (next fire after instants spread over 2027)\n');
  console.log(
    formatTable(
      ['trigger', 'next fires / s'],
      engine.map((result) => [result.trigger, fixed(result.perSecond, 0)]),
    ),
  );
}

function printDeliveries(result: DeliveryResult): void {
  console.log(`\nWebhook deliveries (local twin, ${result.deliveries} alerts fired at once, receiver on loopback)\n`);
  console.log(
    formatTable(
      ['deliveries', 'queued in ms', 'all received in ms', 'deliveries / s'],
      [[result.deliveries, fixed(result.queueMs, 0), fixed(result.totalMs, 0), fixed(result.perSecond, 1)]],
    ),
  );
}

async function writeResults(
  latency: readonly LatencyResult[],
  templates: readonly OperationResult[],
  schedules: { ticks: readonly TickResult[]; engine: readonly EngineResult[] },
  deliveries: DeliveryResult,
  bundles: readonly BundleSize[],
): Promise<void> {
  const results = {
    timestamp: new Date().toISOString(),
    node: process.version,
    platform: `${process.platform} ${process.arch}`,
    cpus: cpus().length,
    loadAverageAtStart: loadAverage,
    settings: { ...settings, twinWarmupRequestsPerRoute },
    latency,
    templates: { settings: templateSettings, results: templates },
    schedules,
    deliveries,
    bundles: bundles.map((bundle) => ({ ...bundle, kilobytes: Number(fixed(kilobytes(bundle.bytes), 1)) })),
    bundleBudgetBytes,
  };
  await writeFile(resultsFile, `${JSON.stringify(results, null, 2)}\n`);
}

// Other work on the machine (tests, a second twin) shows up in every latency: say how busy it was.
const loadAverage = loadavg()[0] ?? 0;
console.log(`bench: node ${process.version}, ${cpus().length} CPUs, load average ${fixed(loadAverage, 2)} at start`);
if (loadAverage > cpus().length)
  console.log('NOTE: the machine was already busy; absolute latencies will be inflated and noisy.');
console.log();
const { latency, templates, ticks, deliveries } = await runTwinBenchmarks();
printLatency(latency);
printTemplateOperations(templates);
const engine = measureTriggerEngine();
printSchedules(ticks, engine);
printDeliveries(deliveries);
process.stderr.write('  synthesizing the stack to measure bundles (about 15 s)...\n');
const bundles = await measureBundles(projectRoot, callerEnvironment);
printBundles(bundles);
await writeResults(latency, templates, { ticks, engine }, deliveries, bundles);
console.log(`\nNumbers written to ${relative(projectRoot, resultsFile)}`);
