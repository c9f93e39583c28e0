/**
 * `npm run bench`: every benchmark the issues asked for, on the local twin, written as a report
 * (bench/results.md, and the numbers in bench/results.json): latency of the main routes against
 * the token-lookup baseline measured in the same run, DynamoDB round trips per operation, scaling
 * at 1x/10x/100x data, the dispatcher tick, webhook deliveries, the trigger engine, and each
 * function's bundle size and cold-start load time, with the budgets shown as pass or fail. It is
 * a report, not a test: nothing here fails on a slow number.
 */
import { writeFile } from 'node:fs/promises';
import { cpus, loadavg } from 'node:os';
import { relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { startTwin } from '../local/twin.ts';
import { type BundleMeasurements, bundleBudgetBytes, measureBundles } from './bundles.ts';
import { type LatencyCase, type LatencyResult, type LatencySettings, measureLatency, warmUp } from './latency.ts';
import { fixed, markdownTable, ratio } from './table.ts';
import { type DeliveryResult, measureDeliveries } from './alerts.ts';
import { type DynamoRequestCosts, measureDynamoRequests } from './dynamo-requests.ts';
import { type EngineResult, measureDispatcherTicks, measureTriggerEngine, type TickResult } from './schedules.ts';
import { measureScaling, measureTemplateOperations, type OperationResult, type ScalingRow } from './templates.ts';
import { twinData } from './twin-api.ts';

const projectRoot = fileURLToPath(new URL('..', import.meta.url));
const resultsFile = fileURLToPath(new URL('results.json', import.meta.url));
const reportFile = fileURLToPath(new URL('results.md', import.meta.url));

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

/**
 * One request at a time unless BENCH_CONNECTIONS says otherwise: on Lambda each concurrent request
 * has an execution environment (and a CPU) of its own, whereas here they would all share this
 * machine's cores with DynamoDB Local, and the latencies would measure the machine's throughput
 * rather than a route's own cost.
 */
const settings: LatencySettings = {
  requests: positiveIntegerFromEnv('BENCH_REQUESTS', 2000),
  connections: positiveIntegerFromEnv('BENCH_CONNECTIONS', 1),
  warmupRequests: 200,
};
// autocannon splits the requests over the connections and refuses to leave a connection idle.
if (settings.requests < settings.connections) {
  throw new Error(`BENCH_REQUESTS (${settings.requests}) must be at least BENCH_CONNECTIONS (${settings.connections})`);
}

const templateSettings = { resources: 500, reloadItems: 100, runs: positiveIntegerFromEnv('BENCH_APPLY_RUNS', 5) };

const json = (token: string) => ({ 'content-type': 'application/json', authorization: `Bearer ${token}` });

/** The first case is the baseline: only the token lookup, which every authenticated route pays. */
function latencyCases(clientToken: string, tenantToken: string): Array<LatencyCase & { read: boolean }> {
  const read = (path: string, token = tenantToken) => ({
    name: `read ${path}`,
    method: 'GET' as const,
    path,
    headers: json(token),
    read: true,
  });
  return [
    { name: 'baseline', method: 'GET', path: '/whoami', headers: json(tenantToken), read: false },
    read('/tenant'),
    read('/tenants', clientToken),
    read('/tenant/users'),
    read('/tenant/datamart'),
    read('/tenant/schedules'),
    read('/tenant/alerts'),
    read('/tenant/settings'),
    {
      name: 'create tenant',
      method: 'POST',
      path: '/tenants',
      headers: json(clientToken),
      body: JSON.stringify({ nome: 'Bench Load', ativo: true }),
      read: false,
    },
  ];
}

/** One twin for every benchmark: the functions' clients are per-process singletons, as on Lambda. */
async function runTwinBenchmarks(): Promise<{
  latency: Array<LatencyResult & { read: boolean }>;
  dynamo: DynamoRequestCosts;
  templates: OperationResult[];
  scaling: ScalingRow[];
  ticks: TickResult[];
  deliveries: DeliveryResult;
}> {
  // The dispatcher is ticked by the bench itself, at chosen instants.
  const twin = await startTwin({ port: 0, clock: false });
  try {
    // The tenant every tenant-token benchmark authenticates as.
    const { id: tenantId, token: tenantToken } = await twinData(twin, 'POST', '/tenants', twin.clientToken, {
      nome: 'Bench',
      ativo: true,
    });
    const cases = latencyCases(twin.clientToken, tenantToken);
    process.stderr.write(`  warming up the twin (${twinWarmupRequestsPerRoute} requests per route)...\n`);
    for (const testCase of cases) await warmUp(twin.url, testCase, twinWarmupRequestsPerRoute, settings.connections);
    const results: Array<LatencyResult & { read: boolean }> = [];
    for (const testCase of cases) {
      process.stderr.write(`  measuring ${testCase.method} ${testCase.path}...\n`);
      results.push({ ...(await measureLatency(twin.url, testCase, settings)), read: testCase.read });
    }
    process.stderr.write('  measuring DynamoDB requests alone and together...\n');
    const dynamo = await measureDynamoRequests(tenantToken, tenantId);
    process.stderr.write('  measuring template apply and reload...\n');
    const templates = await measureTemplateOperations(twin, templateSettings);
    process.stderr.write('  measuring 1x, 10x and 100x data...\n');
    const scaling = await measureScaling(twin);
    process.stderr.write('  measuring dispatcher ticks (writing 10,000 schedules)...\n');
    const ticks = await measureDispatcherTicks(twin);
    process.stderr.write('  measuring webhook deliveries...\n');
    return { latency: results, dynamo, templates, scaling, ticks, deliveries: await measureDeliveries(twin) };
  } finally {
    await twin.stop();
  }
}

/** Latency within this factor of the baseline's p50 passes (issue 8's budget for read routes). */
const readBudgetRatio = 1.5;
/** A tick at 100x the schedules may cost this much more in round trips and still count as flat. */
const tickTolerance = 1.1;

const pass = (ok: boolean) => (ok ? 'pass' : '**FAIL**');
const kilobytes = (bytes: number) => bytes / 1024;

interface Results {
  latency: Array<LatencyResult & { read: boolean }>;
  dynamo: DynamoRequestCosts;
  templates: OperationResult[];
  scaling: ScalingRow[];
  ticks: TickResult[];
  engine: EngineResult[];
  deliveries: DeliveryResult;
  bundles: BundleMeasurements;
}

function report(results: Results): string {
  const { latency, dynamo, templates, scaling, ticks, engine, deliveries, bundles } = results;
  const [baseline] = latency;
  const baseP50 = baseline?.p50Ms ?? Number.NaN;
  const reads = latency.filter((result) => result.read);
  const slowReads = reads.filter((result) => result.p50Ms > baseP50 * readBudgetRatio);
  const overBudget = bundles.bundles.filter((bundle) => bundle.overBudget);
  const [fewest] = ticks;
  const most = ticks.at(-1);
  const tickFlat = Boolean(fewest && most && most.roundTrips <= fewest.roundTrips * tickTolerance);
  const sections = [
    `# Benchmark report\n\n${new Date().toISOString()}, node ${process.version}, ${cpus().length} CPUs, load average ${fixed(loadAverage, 2)} at start. Local twin (DynamoDB Local, fauxqs) on this machine: compare ratios, not absolute numbers, with AWS.`,
    '## Budgets',
    markdownTable(
      ['budget', 'result', ''],
      [
        [
          `every read route's p50 within ${readBudgetRatio}x of the baseline's`,
          pass(slowReads.length === 0),
          slowReads.map((result) => `${result.path} ${ratio(result.p50Ms, baseP50)}`).join(', '),
        ],
        [
          `no function bundle over ${kilobytes(bundleBudgetBytes)} KB`,
          pass(overBudget.length === 0),
          `${overBudget.length} of ${bundles.bundles.length} over`,
        ],
        [
          'a dispatcher tick costs the same whatever the number of schedules not due',
          pass(tickFlat),
          fewest && most
            ? `${fewest.roundTrips} round trips at ${fewest.schedules} schedules, ${most.roundTrips} at ${most.schedules}`
            : '',
        ],
      ],
    ),
    `## Latency\n\n${settings.requests} requests over ${settings.connections} connections per route, after ${twinWarmupRequestsPerRoute} warm-up requests per route. The baseline, \`GET /whoami\`, is only the token lookup every route pays.`,
    markdownTable(
      ['benchmark', 'route', 'non-2xx', 'p50 ms', 'p99 ms', 'req/s', 'p50 vs base', 'p99 vs base', 'budget'],
      latency.map((result) => [
        result.name,
        `${result.method} ${result.path}`,
        result.non2xx,
        fixed(result.p50Ms, 2),
        fixed(result.p99Ms, 2),
        fixed(result.requestsPerSecond, 0),
        ratio(result.p50Ms, baseP50),
        ratio(result.p99Ms, baseline?.p99Ms ?? Number.NaN),
        result.read ? pass(result.p50Ms <= baseP50 * readBudgetRatio) : '',
      ]),
    ),
    `## DynamoDB requests on this machine\n\nThe token lookup alone, then with a one-partition query after it or beside it (median of 2000, no HTTP). A read route pays the lookup and then its own reads, so on this machine each request it adds costs about another baseline. Even started together, two requests take ${ratio(dynamo.twoInParallelMs, dynamo.oneMs)} the time of one: DynamoDB Local works through them nearly in turn, where DynamoDB overlaps them.`,
    markdownTable(
      ['requests', 'median ms', 'vs one'],
      [
        ['token lookup', fixed(dynamo.oneMs, 2), '1.00x'],
        ['lookup, then query', fixed(dynamo.twoInSequenceMs, 2), ratio(dynamo.twoInSequenceMs, dynamo.oneMs)],
        ['lookup and query together', fixed(dynamo.twoInParallelMs, 2), ratio(dynamo.twoInParallelMs, dynamo.oneMs)],
      ],
    ),
    `## Operations and DynamoDB round trips\n\nMedian of ${templateSettings.runs} tenants.`,
    markdownTable(
      ['operation', 'median ms', 'max ms', 'round trips'],
      templates.map((result) => [result.operation, fixed(result.medianMs, 1), fixed(result.maxMs, 1), result.roundTrips]),
    ),
    '## Scaling: 1x, 10x, 100x data',
    markdownTable(
      ['operation', 'scale', 'size', 'ms', 'round trips'],
      scaling.map((row) => [row.operation, row.scale, row.size, fixed(row.ms, 1), row.roundTrips]),
    ),
    '## Dispatcher tick\n\n100 schedules due (each starting 2 flows), among more and more that are not.',
    markdownTable(
      ['schedules', 'due', 'fired', 'ms', 'round trips'],
      ticks.map((tick) => [tick.schedules, tick.due, tick.fired, fixed(tick.ms, 1), tick.roundTrips]),
    ),
    '## Trigger engine\n\nNext-fire computations per second, from instants spread over 2027.',
    markdownTable(
      ['trigger', 'next fires / s'],
      engine.map((result) => [result.trigger, fixed(result.perSecond, 0)]),
    ),
    `## Webhook deliveries\n\n${deliveries.deliveries} alerts fired at once; a receiver on loopback.`,
    markdownTable(
      ['deliveries', 'queued in ms', 'all received in ms', 'deliveries / s'],
      [[deliveries.deliveries, fixed(deliveries.queueMs, 0), fixed(deliveries.totalMs, 0), fixed(deliveries.perSecond, 1)]],
    ),
    `## Functions: bundle size and cold-start load\n\nindex.mjs as \`cdk synth\` bundles it (1 KB = 1024 bytes); load = median time a fresh Node.js process takes to import it, against a bare bundle that only creates the DynamoDB client (${fixed(bundles.baselineLoadMs, 1)} ms).`,
    markdownTable(
      ['function', 'KB', 'budget', 'load ms', 'load vs bare'],
      [...bundles.bundles]
        .sort((a, b) => b.bytes - a.bytes)
        .map((bundle) => [
          bundle.functionId,
          fixed(kilobytes(bundle.bytes), 1),
          pass(!bundle.overBudget),
          fixed(bundle.loadMs, 1),
          ratio(bundle.loadMs, bundles.baselineLoadMs),
        ]),
    ),
  ];
  return `${sections.join('\n\n')}\n`;
}

// Other work on the machine (tests, a second twin) shows up in every latency: say how busy it was.
const loadAverage = loadavg()[0] ?? 0;
console.log(`bench: node ${process.version}, ${cpus().length} CPUs, load average ${fixed(loadAverage, 2)} at start`);
if (loadAverage > cpus().length)
  console.log('NOTE: the machine was already busy; absolute latencies will be inflated and noisy.');
const twinResults = await runTwinBenchmarks();
const engine = measureTriggerEngine();
process.stderr.write('  synthesizing the stack, then loading every bundle in fresh processes (about a minute)...\n');
const bundles = await measureBundles(projectRoot, callerEnvironment);
const results: Results = { ...twinResults, engine, bundles };
const markdown = report(results);
console.log(`\n${markdown}`);
await writeFile(reportFile, markdown);
await writeFile(
  resultsFile,
  `${JSON.stringify({ timestamp: new Date().toISOString(), node: process.version, cpus: cpus().length, loadAverageAtStart: loadAverage, settings: { ...settings, twinWarmupRequestsPerRoute }, bundleBudgetBytes, ...results }, null, 2)}\n`,
);
console.log(`Report written to ${relative(projectRoot, reportFile)}, numbers to ${relative(projectRoot, resultsFile)}`);
