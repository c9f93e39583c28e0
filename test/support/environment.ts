import { inject } from 'vitest';
import { localEnvironment } from '../../local/twin.ts';

// Core modules used directly by tests talk to the same DynamoDB Local as the twin.
Object.assign(process.env, localEnvironment(inject('dynamodbEndpoint')));
