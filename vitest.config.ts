import { setFlagsFromString } from 'node:v8';
import { defineConfig } from 'vitest/config';
import { LongestFirst } from './test/support/sequencer.ts';
import { connectedFolders, connectedStateful, needsTheTwin } from './test/support/test-projects.ts';

/**
 * Five projects, one run: `npm test` runs them all, `npm run test:unit` the two unit ones.
 * - `unit` and `unit-isolated`: pure tests (no I/O), the second for files that need modules of their own.
 * - `connected` and `connected-isolated`: integration and end-to-end tests (and the CDK test that runs the
 *   bundled functions), against one DynamoDB Local and one local twin for the whole run, and the browser the
 *   global setup finds (test/support/global-setup.ts); the second for files that need a process of their own.
 * - `infra`: the CDK tests, synthesizing the stacks.
 */
/**
 * Unit files that change process or module state: environment variables a module reads once, a
 * keyring cached per cold start (metrics on, a token keyring file of their own), module mocks.
 * Each of them gets fresh modules.
 */
const stateful = [
  'test/unit/edge-function.test.ts',
  'test/unit/login-token-keys.test.ts',
  'test/unit/metrics.test.ts',
  'test/unit/signed-fetch.test.ts',
  'test/unit/tokens.test.ts',
];

/**
 * Empty: the twin the connected project starts in this process declares multi-concurrency (local/lambda-context.ts),
 * but the workers of the other projects, which import handlers (and call them one at a time), have no InvokeStore.
 */
const oneAtATime = { AWS_LAMBDA_MAX_CONCURRENCY: '' };

/**
 * The CDK's check of each synthesized template against CloudFormation's rules runs once, in
 * test/infra/template-validation.test.ts: elsewhere it took most of each synthesis's time.
 */
const cdk = { CDK_VALIDATION: 'false' };

/**
 * V8 (Node 20's) optimizes a function once it has run a budget of bytecode (67,584 by default). A test file runs most
 * of its code for milliseconds, so most of that compiling was never paid back: in the unit run, V8's compiler threads
 * used about 8 of its 38 CPU-s. With four times the budget, the unit run used 34.3 CPU-s against 37.8, and took 18.9 s
 * against 20.6 (medians of three runs, taken in turn); the CDK tests, whose synthesis runs long enough to be paid back,
 * about the same (146 CPU-s either way). Set here for this process and its worker threads (the unit tests, the shared
 * twin), and given to the child processes of the projects that run on forks (vitest's default pool); a project on
 * threads must not be given it, as Node refuses V8 flags for a worker thread. It changes when code is optimized, never
 * what it does.
 */
const laterOptimization = `--interrupt-budget=${4 * 67_584}`;
setFlagsFromString(laterOptimization);

/** The integration and end-to-end files, and the CDK test that runs the bundled functions. */
const connectedFiles = [...connectedFolders.map((folder) => `${folder}/**/*.test.ts`), needsTheTwin];

/** What both connected projects share: the one twin and browser (test/support/global-setup.ts), the environment. */
const connected = {
  execArgv: [laterOptimization],
  globalSetup: ['test/support/global-setup.ts', 'test/support/cdk-global-setup.ts'],
  setupFiles: ['test/support/environment.ts'],
  env: cdk,
};

/** What both unit projects share: pure tests (no I/O), on threads. */
const unit = {
  // No native add-ons or process state in these files: threads start faster than forks.
  pool: 'threads',
  env: {
    // They import handlers, whose configuration check at cold start wants a table name and a domain:
    // given here, and never reached.
    TABLE_NAME: 'unit-tests-reach-no-table',
    TENANT_BASE_DOMAIN: 'localhost',
    AWS_REGION: 'us-east-1',
    ...oneAtATime,
  },
} as const;

export default defineConfig({
  test: {
    // Most connected files wait on DynamoDB Local, the twin, a child process or a minute boundary rather than
    // compute: on a 2-core machine two workers kept about 1.1 cores busy, three about 1.6. Three and four failed on
    // fresh clones while two test files scanned the whole shared table (DynamoDB Local serves one request at a time,
    // and each page of a scan of a table every file had written to held it long enough for other files' transactions
    // to time out waiting for a lock, or a route to run past its 15 s): `tokens unsigned` now scans a table of its
    // own, and test/support/sequencer.ts starts the other scan first, while the table is small. With three, the whole
    // run kept 1.8 of the 2 cores busy (1,100 CPU seconds in 610 to 620 s), idling at the end; with four, 586 s here and
    // 548 and 552 s on two fresh clones, every file passing. Four. The run stays CPU-bound (four files at once nearly
    // throughout; with `laterOptimization`, about 890 CPU seconds and 485 s here, 503 s on a fresh clone): the same
    // commit's time moved by 15% on one day, as the machine's speed moved, so only less CPU makes it shorter.
    maxWorkers: 4,
    // A guard against a hang, not a measure of speed: on a fresh clone (cold caches) the whole suite kept both
    // cores busy and a few 30-second tests of the shared twin ran past 30 s; none measures time.
    testTimeout: 60_000,
    sequence: { sequencer: LongestFirst },
    hookTimeout: 120_000,
    env: { POWERTOOLS_LOG_LEVEL: 'WARN', AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true' },
    projects: [
      {
        extends: true,
        test: {
          ...unit,
          name: 'unit',
          // One module cache per thread, shared by its files: loading the modules again for each file was
          // most of the unit run (38 of 60 s of thread time). The files that set process state or module
          // state (environment variables read once, keyrings cached per cold start, module mocks) are in
          // unit-isolated instead.
          isolate: false,
          include: ['test/unit/**/*.test.ts'],
          exclude: stateful,
        },
      },
      {
        extends: true,
        test: { ...unit, name: 'unit-isolated', include: stateful },
      },
      {
        extends: true,
        test: {
          ...connected,
          name: 'connected',
          // The files of a worker share its modules: loading them again for each file (a fresh process
          // each) cost about 0.8 CPU-s a file, a tenth of the run. Those that change process or module
          // state are in connected-isolated instead.
          isolate: false,
          include: connectedFiles,
          exclude: connectedStateful,
        },
      },
      {
        extends: true,
        test: { ...connected, name: 'connected-isolated', include: connectedStateful },
      },
      {
        extends: true,
        test: {
          name: 'infra',
          execArgv: [laterOptimization],
          // Synthesis only (and the generated files' checks): no twin, no process state but CDK_VALIDATION, which
          // template-validation.test.ts puts back when it is done. The files share their workers' modules: loading
          // aws-cdk-lib and lib/ again for each file was a fifth of their CPU time, and the apps
          // test/support/stages.ts keeps serve every file of the worker.
          isolate: false,
          include: ['test/infra/**/*.test.ts'],
          exclude: [needsTheTwin],
          globalSetup: ['test/support/cdk-global-setup.ts'],
          env: { ...cdk, ...oneAtATime },
        },
      },
    ],
  },
});
