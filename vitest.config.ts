import { defineConfig } from 'vitest/config';

/**
 * Two projects, one run: `npm test` runs both, `npm run test:unit` only `unit`.
 * - `unit`: pure tests (no I/O). They import handlers, whose configuration check at cold start
 *   wants a table name and a domain: given here, and never reached.
 * - `connected`: integration, end-to-end and CDK tests, against one DynamoDB Local and one local
 *   twin for the whole run, and the browser the global setup finds (test/support/global-setup.ts).
 */
export default defineConfig({
  test: {
    // Most connected files wait on DynamoDB Local, the twin, a child process or a minute boundary rather
    // than compute: on a 2-core machine two workers kept about 1.1 cores busy, three about 1.6 (the whole
    // suite measured 13:00 with two, 9:33 with three in the same hour); with the README sessions' clock
    // waits and the packed-client install, four finished in 8:29 where three took 9:30 (same machine, same
    // commit). With fleet rollouts and the client's events (166 files), four and then three on a fresh clone
    // ran the race files (tenant deletion, quotas) beside each other and the admin CLI's processes, and DynamoDB
    // Local refused some of their transactions ("too long waiting for a lock") or a route ran past its 15 s: two,
    // until the suite is made lighter (issue 40). The unit project runs on threads in a few seconds either way.
    maxWorkers: 2,
    // A guard against a hang, not a measure of speed: on a fresh clone (cold caches) the whole suite kept both
    // cores busy and a few 30-second tests of the shared twin ran past 30 s; none measures time.
    testTimeout: 60_000,
    hookTimeout: 120_000,
    env: { POWERTOOLS_LOG_LEVEL: 'WARN', AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true' },
    projects: [
      {
        extends: true,
        test: {
          name: 'unit',
          // No native add-ons or process state in these files: threads start faster than forks.
          // Each file keeps its own modules: metrics.test.ts needs the metrics module loaded with
          // metrics on, which sharing a thread's module cache (isolate: false) broke in some orders.
          pool: 'threads',
          include: ['test/unit/**/*.test.ts'],
          env: {
            TABLE_NAME: 'unit-tests-reach-no-table',
            TENANT_BASE_DOMAIN: 'localhost',
            AWS_REGION: 'us-east-1',
            // Empty: the twin the connected project starts in this process declares multi-concurrency
            // (local/lambda-context.ts), but these workers call handlers one at a time, with no InvokeStore.
            AWS_LAMBDA_MAX_CONCURRENCY: '',
          },
        },
      },
      {
        extends: true,
        test: {
          name: 'connected',
          include: ['test/{integration,e2e,infra}/**/*.test.ts'],
          globalSetup: ['test/support/global-setup.ts'],
          setupFiles: ['test/support/environment.ts'],
          // The CDK's check of each synthesized template against CloudFormation's rules runs once, in
          // test/infra/template-validation.test.ts: elsewhere it took most of each synthesis's time.
          env: { CDK_VALIDATION: 'false' },
        },
      },
    ],
  },
});
