import { inject } from 'vitest';

// Core modules used directly by tests talk to the same DynamoDB Local, fauxqs and keys as the twin.
Object.assign(process.env, inject('twinEnvironment'));

// The twin's process runs handlers as concurrent invocations (see local/lambda-context.ts); test
// workers call handlers and core modules directly, one at a time, as a single-concurrency Lambda.
delete process.env.AWS_LAMBDA_MAX_CONCURRENCY;
