/** The folders of the connected files (integration and end-to-end tests), which run against the shared twin. */
export const connectedFolders = ['test/integration', 'test/e2e'];

/** The CDK test that runs the bundled functions against the twin's DynamoDB Local and queues: connected, not infra. */
export const needsTheTwin = 'test/infra/service-stack.test.ts';

/**
 * Connected files that change process or module state: environment variables that modules read once
 * (a table, queues or keyrings of their own), spies, mocks, fake timers. The other connected files
 * share their worker's modules, one after another; these run in `connected-isolated` (vitest.config.ts),
 * a fresh process each. test/unit/test-isolation-lint.test.ts fails a file that changes such state and
 * is not listed here, and one listed that no longer does. A file may change the environment only for the
 * work it runs, through test/support/scoped-environment.ts, which puts it back however the work ends.
 */
export const connectedStateful = [
  'test/e2e/alerts.test.ts',
  'test/e2e/edge.test.ts',
  'test/integration/aws-limits-queues.test.ts',
  'test/integration/fault-injection.test.ts',
  'test/integration/first-signing-key.test.ts',
  'test/integration/json-secret-protocol.test.ts',
  'test/integration/migration-runner.test.ts',
  'test/integration/schedule-fire-worker.test.ts',
  'test/integration/token-forgery.test.ts',
  'test/integration/token-keys-sync.test.ts',
  'test/integration/webhook-deliverer.test.ts',
];
