import type { ProvidedContext } from 'vitest';
import type { TestProject } from 'vitest/node';
import { JavaMissingError, requireJava } from '#local/dynamodb-local.ts';
import { startTwin, type Twin } from '#local/twin.ts';
import { chromiumExecutable } from './browser.ts';

declare module 'vitest' {
  export interface ProvidedContext {
    twinUrl: string;
    dynamodbEndpoint: string;
    localClientToken: string;
    sqsEndpoint: string;
    queueUrls: Record<string, string>;
    deadLetterQueueUrls: Record<string, string>;
    twinEnvironment: Record<string, string>;
    /** The browser the browser tests drive, or why there is none (only those tests then fail, saying so). */
    chromium: { path: string } | { problem: string };
  }
}

/** Seconds before a failed queue message reappears in tests (180 on AWS). */
export const testVisibilityTimeoutSeconds = 1;
/** The webhook retry schedule in tests: seven retries a second apart, instead of 5 s to 10 h. */
export const testWebhookRetryDelaysSeconds = [1, 1, 1, 1, 1, 1, 1];
/** A paused webhook endpoint in tests: probed after a second, then two, instead of 30 s doubling to 10 min. */
export const testWebhookBreakerCooldownSeconds = { first: 1, longest: 2 };

/** What the connected projects share: one twin, one browser lookup, and the projects still using them. */
interface Shared {
  started: Promise<{ twin: Twin; chromium: ProvidedContext['chromium']; prototypeNames: string }>;
  users: number;
}
const sharedKey = Symbol.for('bi-tenant-admin.test-twin');
const registry = globalThis as { [sharedKey]?: Shared };

/**
 * Starts the real local twin (DynamoDB Local, fauxqs, pollers, gateway) once for every test file of
 * both connected projects (vitest.config.ts): each project runs its global setup, in this one process,
 * and the second finds the twin the first started (on globalThis: vitest may load this module once per
 * project). The last project to end stops it. Without its wall clock: tests tick the schedule
 * dispatcher at instants of their choosing, and test/e2e/readme.test.ts runs a twin of its own to see
 * the clock fire (the README schedule session).
 */
export default async function setup(project: TestProject) {
  const shared = (registry[sharedKey] ??= { started: startShared(), users: 0 });
  shared.users += 1;
  const { twin, chromium, prototypeNames } = await shared.started;
  project.provide('chromium', chromium);
  project.provide('twinUrl', twin.url);
  project.provide('dynamodbEndpoint', twin.dynamodbEndpoint);
  project.provide('localClientToken', twin.clientToken);
  project.provide('sqsEndpoint', twin.sqsEndpoint);
  project.provide('queueUrls', twin.queueUrls);
  project.provide('deadLetterQueueUrls', twin.deadLetterQueueUrls);
  project.provide('twinEnvironment', twin.environment);
  return async () => {
    shared.users -= 1;
    if (shared.users > 0) return;
    delete registry[sharedKey];
    await twin.stop();
    const now = Object.getOwnPropertyNames(Object.prototype).sort().join();
    if (now !== prototypeNames) throw new Error(`Object.prototype was polluted: ${now} (was ${prototypeNames})`);
  };
}

async function startShared(): Promise<Awaited<Shared['started']>> {
  // The shared twin's handlers run in this process, which the config's `env` (for the test workers)
  // does not reach. Their INFO lines (about 14,000 "Request handled", 10 MB a run) are read by no
  // test and buried the failures in CI's log; warnings and errors still print.
  process.env.POWERTOOLS_LOG_LEVEL ||= 'WARN';
  try {
    requireJava();
  } catch (error) {
    // Without Java the run cannot start: one line saying what to install, not a stack trace.
    if (!(error instanceof JavaMissingError)) throw error;
    console.error(error.message);
    process.exit(1);
  }
  const [twin, chromium] = await Promise.all([
    startTwin({
      port: 0,
      queueVisibilityTimeoutSeconds: testVisibilityTimeoutSeconds,
      clock: false,
      webhookRetryDelaysSeconds: testWebhookRetryDelaysSeconds,
      webhookBreakerCooldownSeconds: testWebhookBreakerCooldownSeconds,
      // Every connected file's requests, over 100,000 a run: the JVM's full compiler pays for itself.
      load: 'heavy',
    }),
    chromiumExecutable().then(
      (path) => ({ path }),
      (error: unknown) => ({ problem: String(error) }),
    ),
  ]);
  // The twin's handlers run in this process: whatever the tests sent them (the hostile-input suite
  // sends `__proto__` and `constructor` keys), Object.prototype must end as it started.
  const prototypeNames = Object.getOwnPropertyNames(Object.prototype).sort().join();
  return { twin, chromium, prototypeNames };
}
