/**
 * `npm run bench`: every benchmark the issues asked for, on the local twin, written as a report
 * (bench/results.md, and the numbers in bench/results.json): latency of the main routes against
 * the token-lookup baseline, every read route against its floor at 1x and 100x data, the writes'
 * requests and depth against their size, the dispatcher tick, webhook deliveries, the trigger engine, and each
 * function's bundle size and cold-start load time, with the budgets shown as pass or fail. It is
 * a report, not a test: nothing here fails on a slow number.
 */
import { readFile, writeFile } from 'node:fs/promises';
import { cpus, loadavg } from 'node:os';
import { relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { startTwin } from '#local/twin.ts';
import { type BundleMeasurements, bundleBudgetBytes, loadBudgetRatio, measureBundles } from './bundles.ts';
import { type LatencyCase, type LatencyResult, type LatencySettings, measureLatency, warmUp } from './latency.ts';
import { fixed, markdownTable, measuredAt, ratio } from './table.ts';
import { type DeliveryResult, measureDeliveries } from './alerts.ts';
import { type DynamoRequestCosts, measureDynamoRequests } from './dynamo-requests.ts';
import { dispatchSettingLimits } from '#functions/core/schedules/dispatch-settings.ts';
import { schedulesPerMessage } from '#functions/core/schedules/dispatcher.ts';
import { queueConsumers } from '#functions/routes.ts';
import { FIRE_CONCURRENCY } from '#lib/deployment-settings.ts';
import { awsAssumptions, type BurstModel, burstModel } from './burst-model.ts';
import { type BurstResult, type EngineResult, measureTriggerEngine } from './schedules.ts';
import { runForStdout } from './child-process.ts';
import { budgetCells, readBudgetSettings, rewriteBudgetSection } from './budget-sections.ts';
import { measureReadBudget, readBudgetRows, readBudgetSection, type ReadBudgetRow } from './read-budget.ts';
import { measureWrites, writeBudgetRows, writeSection, type WriteRow } from './write-costs.ts';
import { twinData } from './twin-api.ts';
import { measureParsers, type ParserCost, parserBudgetRatio, parserRepeats, parserRunsPerRepeat } from './parsers.ts';
import { rewriteNoisySection } from './noisy-section.ts';
import { rewriteRolloutSection } from './rollout-section.ts';
import { itemSizeSection } from './item-sizes.ts';

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
  reads: ReadBudgetRow[];
  writes: WriteRow[];
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
    const progress = (message: string) => process.stderr.write(`${message}\n`);
    const { rows: reads, tenants } = await measureReadBudget(twin, readBudgetSettings, progress);
    const writes = await measureWrites(twin, tenants, progress);
    process.stderr.write('  measuring webhook deliveries...\n');
    return { latency: results, dynamo, reads, writes, deliveries: await measureDeliveries(twin) };
  } finally {
    await twin.stop();
  }
}

/** The burst benchmark runs in a process of its own, with a twin of its own (bench/bursts.ts says why). */
async function runBurstBenchmarks(): Promise<BurstResult[]> {
  const output = await runForStdout(process.execPath, ['--import', 'tsx', fileURLToPath(new URL('bursts.ts', import.meta.url))], {
    cwd: projectRoot,
    env: callerEnvironment,
  });
  return JSON.parse(output) as BurstResult[];
}

/** Issue 14's budgets: a burst of this many fires within a minute of its slot, on paper on AWS and on the twin. */
const modelDue = 100_000;
const twinBudgetDue = 10_000;
const lateBudgetSeconds = 60;

/** The burst on AWS with the stack's defaults, from the per-schedule cost of the largest burst measured. */
function modelOf(bursts: readonly BurstResult[]): { input: Parameters<typeof burstModel>[0]; model: BurstModel } | undefined {
  const largest = bursts.at(-1);
  const fireWorker = queueConsumers.find((consumer) => consumer.queue === 'fire');
  if (!largest || !fireWorker) return undefined;
  const input = {
    due: modelDue,
    dynamoPerFire: largest.dynamoPerFire,
    sqsPerFire: largest.sqsPerFire,
    dueShards: dispatchSettingLimits.dueShards.fallback,
    duePageSize: dispatchSettingLimits.duePageSize.fallback,
    fireConcurrency: FIRE_CONCURRENCY.fallback,
    batchSize: fireWorker.batchSize,
    schedulesPerMessage,
  };
  return { input, model: burstModel(input) };
}

const pass = (ok: boolean) => (ok ? 'pass' : '**FAIL**');
const kilobytes = (bytes: number) => bytes / 1024;

interface Results {
  latency: Array<LatencyResult & { read: boolean }>;
  dynamo: DynamoRequestCosts;
  reads: ReadBudgetRow[];
  writes: WriteRow[];
  bursts: BurstResult[];
  engine: EngineResult[];
  deliveries: DeliveryResult;
  bundles: BundleMeasurements;
  parsers: ParserCost[];
}

/** The bundles' section: each function's size and module load against a bare bundle's. */
function bundleSection(bundles: BundleMeasurements): string {
  return [
    `## Functions: bundle size and cold-start load\n\nindex.mjs as \`cdk synth\` bundles it (1 KB = 1024 bytes); load = median time a fresh Node.js process takes to import it, 7 times, each beside a bare bundle's load (one that only creates the DynamoDB client; its median in the row's \`bare ms\`), so that both see the machine alike.`,
    markdownTable(
      ['function', 'KB', 'budget', 'load ms', 'bare ms', 'load vs bare'],
      [...bundles.bundles]
        .sort((a, b) => b.bytes - a.bytes)
        .map((bundle) => [
          bundle.functionId,
          fixed(kilobytes(bundle.bytes), 1),
          pass(!bundle.overBudget),
          fixed(bundle.loadMs, 1),
          fixed(bundle.bareMs, 1),
          ratio(bundle.loadMs, bundle.bareMs),
        ]),
    ),
  ].join('\n\n');
}

function report(results: Results): string {
  const { latency, dynamo, reads, writes, bursts, engine, deliveries, bundles, parsers } = results;
  const [baseline] = latency;
  const baseP50 = baseline?.p50Ms ?? Number.NaN;
  const overBudget = bundles.bundles.filter((bundle) => bundle.overBudget);
  const slowLoads = bundles.bundles.filter((bundle) => bundle.loadMs > loadBudgetRatio * bundle.bareMs);
  const twinBurst = bursts.find((burst) => burst.due === twinBudgetDue);
  const modelled = modelOf(bursts);
  const sections = [
    `# Benchmark report\n\n${new Date().toISOString()}, node ${process.version}, ${cpus().length} CPUs, load average ${fixed(loadAverage, 2)} at start. Local twin (DynamoDB Local, fauxqs) on this machine: compare ratios, not absolute numbers, with AWS.`,
    '## Budgets',
    markdownTable(
      ['budget', 'result', ''],
      [
        ...[...readBudgetRows(reads), ...writeBudgetRows(writes)].map(budgetCells),
        [
          `no function bundle over ${kilobytes(bundleBudgetBytes)} KB`,
          pass(overBudget.length === 0),
          `${overBudget.length} of ${bundles.bundles.length} over`,
        ],
        [
          `every function's module load within ${loadBudgetRatio}x of a bare bundle's (the DynamoDB client alone), loaded in turn`,
          pass(slowLoads.length === 0),
          slowLoads.map((bundle) => `${bundle.functionId} ${ratio(bundle.loadMs, bundle.bareMs)}`).join(', '),
        ],
        [
          `${modelDue.toLocaleString('en')} schedules due in one minute all fire within ${lateBudgetSeconds} s of their slot, on paper on AWS (model below)`,
          pass(Boolean(modelled && modelled.model.lastFireSeconds < lateBudgetSeconds)),
          modelled ? `last fire ${fixed(modelled.model.lastFireSeconds, 1)} s after the slot` : '',
        ],
        [
          `on the twin, lateness p99 of ${twinBudgetDue.toLocaleString('en')} schedules due in one minute under ${lateBudgetSeconds} s`,
          pass(Boolean(twinBurst && twinBurst.latenessP99Ms < lateBudgetSeconds * 1000)),
          twinBurst ? `p99 ${fixed(twinBurst.latenessP99Ms / 1000, 1)} s` : '',
        ],
        [
          `every parser the API exposes takes at most ${parserBudgetRatio}x the time for 2n items as for n`,
          pass(parsers.every(parserWithinBudget)),
          parsers
            .filter((cost) => !parserWithinBudget(cost))
            .map((cost) => cost.parser)
            .join(', '),
        ],
      ],
    ),
    `## Latency\n\n${settings.requests} requests over ${settings.connections} connections per route, after ${twinWarmupRequestsPerRoute} warm-up requests per route. The baseline, \`GET /whoami\`, is only the token lookup every route pays; each read route's budget is against its own floor (next section).`,
    markdownTable(
      ['benchmark', 'route', 'non-2xx', 'p50 ms', 'p99 ms', 'req/s', 'p50 vs base', 'p99 vs base'],
      latency.map((result) => [
        result.name,
        `${result.method} ${result.path}`,
        result.non2xx,
        fixed(result.p50Ms, 2),
        fixed(result.p99Ms, 2),
        fixed(result.requestsPerSecond, 0),
        ratio(result.p50Ms, baseP50),
        ratio(result.p99Ms, baseline?.p99Ms ?? Number.NaN),
      ]),
    ),
    readBudgetSection(reads, readBudgetSettings),
    `## DynamoDB requests on this machine\n\nThe token lookup alone, then with a one-partition query after it or beside it (median of 2000, no HTTP). A read route pays the lookup and then its own reads, so on this machine each request it adds costs about another baseline. Even started together, two requests take ${ratio(dynamo.twoInParallelMs, dynamo.oneMs)} the time of one: DynamoDB Local works through them nearly in turn, where DynamoDB overlaps them.`,
    markdownTable(
      ['requests', 'median ms', 'vs one'],
      [
        ['token lookup', fixed(dynamo.oneMs, 2), '1.00x'],
        ['lookup, then query', fixed(dynamo.twoInSequenceMs, 2), ratio(dynamo.twoInSequenceMs, dynamo.oneMs)],
        ['lookup and query together', fixed(dynamo.twoInParallelMs, 2), ratio(dynamo.twoInParallelMs, dynamo.oneMs)],
      ],
    ),
    writeSection(writes),
    `## Schedule bursts on the twin\n\nSchedules due in the same minute, each starting two flows, over 100 tenants, among 10,000 schedules not due. The tick runs at the slot (as the EventBridge rule does) and lists them into the fire queue; the twin's fire worker (10 batches of 10 messages at a time, as fireConcurrency's default) fires them. Lateness is fire time minus slot. Round trips are the tick's and the fire workers' requests over the schedules fired (SQS: the functions' sends; on AWS the event source mapping receives and deletes).`,
    markdownTable(
      [
        'due',
        'fired',
        'tick ms',
        'tick requests',
        'messages',
        'fire ms',
        'DynamoDB / fire',
        'SQS / fire',
        'lateness p50 s',
        'lateness p99 s',
      ],
      bursts.map((burst) => [
        burst.due,
        burst.fired,
        fixed(burst.tickMs, 0),
        burst.tickRoundTrips,
        burst.messages,
        fixed(burst.fireMs, 0),
        fixed(burst.dynamoPerFire, 2),
        fixed(burst.sqsPerFire, 2),
        fixed(burst.latenessP50Ms / 1000, 1),
        fixed(burst.latenessP99Ms / 1000, 1),
      ]),
    ),
    modelSection(modelled),
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
    parserSection(parsers),
    bundleSection(bundles),
  ];
  return `${sections.join('\n\n')}\n`;
}

/** The median ratio: the spread beside it shows how far one repeat strays. */
const parserWithinBudget = (cost: ParserCost) => cost.ratio <= parserBudgetRatio;

/** The cost of each parser at n and 2n items (bench/parsers.ts), with the linearity budget. */
function parserSection(parsers: readonly ParserCost[]): string {
  return [
    `${parserCostHeading}\n\nEach parser as its route runs it (the error answer built when the body is refused), at n and 2n items in the same run, n chosen to take at least 100 ms: where the route's bounds allow no input that large, the parser's own function on a larger one, as the "measured" column says (the JSON body's 2n is already about all its 1 MB holds). ${measuredAt()} Time is CPU time (the process's user and system time), so other work on the machine's cores weighs little. ${parserRepeats} repeats, the sizes taking turns, each comparing the least of ${parserRunsPerRepeat} runs of 2n in a row with the same of n (each after an untimed run): the table shows the median of the repeats' times and ratios, and the lowest and highest ratio, to compare runs by. Linear code takes about 2x for twice the items, a little more where it fills a table of 50,000 keys or more (a Map of 100,000 keys alone takes about 2.4x the time of one of 50,000 on this machine: the processor's caches); the budget is ${parserBudgetRatio}x, on the median. \`npm run bench -- parsers\` measures this section alone and rewrites only it.`,
    markdownTable(
      ['parser', 'items', 'n', 'measured', 'n ms', '2n ms', '2n / n', 'lowest-highest', 'budget'],
      parsers.map((cost) => [
        cost.parser,
        cost.items,
        cost.n.toLocaleString('en'),
        cost.beyondRoute === undefined ? 'as the route runs it' : `past the route's bound: ${cost.beyondRoute}`,
        fixed(cost.nMs, 1),
        fixed(cost.twiceNMs, 1),
        `${fixed(cost.ratio, 2)}x`,
        `${fixed(cost.lowestRatio, 2)}-${fixed(cost.highestRatio, 2)}x`,
        pass(parserWithinBudget(cost)),
      ]),
    ),
  ].join('\n\n');
}
const parserCostHeading = '## Parser cost';

/** `npm run bench -- parsers`: only the parser section, measured now and put in place of the report's. */
async function rewriteParserSection(): Promise<void> {
  const section = parserSection(measureParsers((message) => process.stderr.write(`${message}\n`)));
  console.log(`\n${section}\n`);
  const markdown = await readFile(reportFile, 'utf8');
  const start = markdown.indexOf(`${parserCostHeading}\n`);
  const end = start === -1 ? -1 : markdown.indexOf('\n## ', start + parserCostHeading.length);
  const rewritten =
    start === -1
      ? `${markdown.trimEnd()}\n\n${section}\n`
      : `${markdown.slice(0, start)}${section}\n${end === -1 ? '' : markdown.slice(end)}`;
  await writeFile(reportFile, rewritten);
  console.log(`Parser cost written to ${relative(projectRoot, reportFile)}`);
}

/** The model's inputs, assumptions and result, as bench/results.md shows them. */
function modelSection(modelled: ReturnType<typeof modelOf>): string {
  if (!modelled) return '## Burst model on AWS\n\nNo burst was measured.';
  const { input, model } = modelled;
  const aws = awsAssumptions;
  return [
    `## Burst model on AWS\n\n${input.due.toLocaleString('en')} schedules due in one minute, with the stack's defaults (dueShards ${input.dueShards}, duePageSize ${input.duePageSize}, fireConcurrency ${input.fireConcurrency}) and the per-schedule cost measured above for the largest burst (${fixed(input.dynamoPerFire, 2)} DynamoDB and ${fixed(input.sqsPerFire, 2)} SQS requests per fire). Latencies and limits assumed, with their sources, in docs/schedules.md (section At scale); the arithmetic is bench/burst-model.ts.`,
    markdownTable(
      ['assumption', 'value'],
      [
        ['DynamoDB request / Query page', `${aws.dynamoRequestMs} ms / ${aws.dynamoPageMs} ms`],
        ['SQS SendMessageBatch', `${aws.sqsRequestMs} ms`],
        ['invocation overhead per batch (warm)', `${aws.invocationOverheadMs} ms`],
        ['requests in flight per worker (SDK sockets)', aws.socketsPerWorker],
        ['event source concurrency: start, added per minute', `${aws.initialConcurrency}, ${aws.concurrencyAddedPerSecond * 60}`],
        ['writes per second per partition (table or index)', aws.partitionWriteUnitsPerSecond],
        ['index write units per fire (old entry out, new in)', aws.indexWriteUnitsPerFire],
        ['tick start after the slot (EventBridge)', `${aws.tickStartSeconds} s`],
      ],
    ),
    markdownTable(
      ['step', 'result'],
      [
        [
          'one worker batch (100 schedules)',
          `${fixed(model.batchMs, 0)} ms: ${fixed(model.firesPerSecondPerWorker, 0)} fires/s per worker`,
        ],
        [`${input.fireConcurrency} workers`, `${fixed(model.computeFiresPerSecond, 0)} fires/s`],
        [`${input.dueShards} index shards`, `${fixed(model.indexFiresPerSecond, 0)} fires/s`],
        ['rate (the lower binds)', `${fixed(model.firesPerSecond, 0)} fires/s, bound by the ${model.binding}`],
        ['tick listing the burst', `${fixed(model.listingSeconds, 1)} s (the workers start on its first page)`],
        ['firing, with the event source ramping up', `${fixed(model.firingSeconds, 1)} s`],
        ['slot to last fire', `**${fixed(model.lastFireSeconds, 1)} s**`],
        ['table writes needed (warm throughput)', `${fixed(model.tableWriteUnitsPerSecond, 0)} WCU/s`],
      ],
    ),
  ].join('\n\n');
}

// Other work on the machine (tests, a second twin) shows up in every latency: say how busy it was.
const loadAverage = loadavg()[0] ?? 0;
console.log(`bench: node ${process.version}, ${cpus().length} CPUs, load average ${fixed(loadAverage, 2)} at start`);
if (loadAverage > cpus().length)
  console.log('NOTE: the machine was already busy; absolute latencies will be inflated and noisy.');
const section = process.argv[2];
const sections = ['parsers', 'reads', 'writes', 'noisy', 'rollouts', 'sizes', 'bundles'];
if (section !== undefined && !sections.includes(section))
  throw new Error(`Unknown bench section ${section}: the ones to run alone are ${sections.join(', ')}`);
if (section === 'sizes') {
  // Computed, not measured: printed only (docs/operations.md, Cost and storage, quotes it).
  console.log(`\n${itemSizeSection()}\n`);
  process.exit(0);
}
if (section === 'bundles') {
  // Printed only: the report's Budgets table is written by the whole run.
  process.stderr.write('  synthesizing the stack, then loading every bundle in fresh processes (a few minutes)...\n');
  console.log(`\n${bundleSection(await measureBundles(projectRoot, callerEnvironment))}\n`);
  process.exit(0);
}
if (section === 'noisy') {
  await rewriteNoisySection(reportFile, callerEnvironment);
  process.exit(0);
}
if (section === 'rollouts') {
  await rewriteRolloutSection(reportFile, callerEnvironment);
  process.exit(0);
}
if (section === 'parsers') {
  await rewriteParserSection();
  process.exit(0);
}
if (section === 'reads' || section === 'writes') {
  await rewriteBudgetSection(section, reportFile);
  process.exit(0);
}
const twinResults = await runTwinBenchmarks();
const bursts = await runBurstBenchmarks();
const engine = measureTriggerEngine();
process.stderr.write('  synthesizing the stack, then loading every bundle in fresh processes (about a minute)...\n');
const bundles = await measureBundles(projectRoot, callerEnvironment);
process.stderr.write('  measuring the parsers at n and 2n items...\n');
const results: Results = { ...twinResults, bursts, engine, bundles, parsers: measureParsers() };
const markdown = report(results);
console.log(`\n${markdown}`);
await writeFile(reportFile, markdown);
await writeFile(
  resultsFile,
  `${JSON.stringify({ timestamp: new Date().toISOString(), node: process.version, cpus: cpus().length, loadAverageAtStart: loadAverage, settings: { ...settings, twinWarmupRequestsPerRoute }, bundleBudgetBytes, ...results }, null, 2)}\n`,
);
await rewriteNoisySection(reportFile, callerEnvironment);
await rewriteRolloutSection(reportFile, callerEnvironment);
console.log(`Report written to ${relative(projectRoot, reportFile)}, numbers to ${relative(projectRoot, resultsFile)}`);
