import { inject } from 'vitest';

// Core modules used directly by tests talk to the same DynamoDB Local, fauxqs and keys as the twin.
Object.assign(process.env, inject('twinEnvironment'));
