import { inject } from 'vitest';
import { type QueueName, queueUrlVariable } from '../../functions/core/store/queue-definitions.ts';
import { localEnvironment } from '../../local/twin.ts';

// Core modules used directly by tests talk to the same DynamoDB Local and fauxqs as the twin.
Object.assign(process.env, localEnvironment(inject('dynamodbEndpoint')), {
  SQS_ENDPOINT: inject('sqsEndpoint'),
  ...Object.fromEntries(Object.entries(inject('queueUrls')).map(([name, url]) => [queueUrlVariable(name as QueueName), url])),
});
