import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    // One DynamoDB Local and one local twin for the whole run (test/support/global-setup.ts).
    globalSetup: ['test/support/global-setup.ts'],
    setupFiles: ['test/support/environment.ts'],
    testTimeout: 30_000,
    hookTimeout: 120_000,
    env: { POWERTOOLS_LOG_LEVEL: 'WARN', AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true' },
  },
});
