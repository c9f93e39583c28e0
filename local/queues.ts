import { startFauxqs } from 'fauxqs';
import { localQueueName, type QueueName, queueDefinitions } from '#functions/core/store/queue-definitions.ts';

/** The payload bucket's name on the twin (AWS names its own). */
export const localPayloadBucket = 'bi-tenant-admin-payloads';

export interface LocalQueues {
  endpoint: string;
  urls: Record<QueueName, string>;
  deadLetterUrls: Record<QueueName, string>;
  stop(): Promise<void>;
}

/**
 * fauxqs (an in-process SQS and S3 emulator) with every queue of `queueDefinitions` and its DLQ,
 * as the stack declares them, and the payload bucket. `visibilityTimeoutSeconds` overrides the definitions' value, so tests can
 * watch redeliveries without waiting minutes.
 */
export async function startLocalQueues(options: { visibilityTimeoutSeconds?: number } = {}): Promise<LocalQueues> {
  const server = await startFauxqs({ port: 0, logger: false });
  const urls = {} as Record<QueueName, string>;
  const deadLetterUrls = {} as Record<QueueName, string>;
  for (const [name, definition] of Object.entries(queueDefinitions) as [QueueName, (typeof queueDefinitions)[QueueName]][]) {
    const fifo: Record<string, string> = definition.fifo
      ? {
          FifoQueue: 'true',
          ...(definition.highThroughput ? { DeduplicationScope: 'messageGroup', FifoThroughputLimit: 'perMessageGroupId' } : {}),
        }
      : {};
    const deadLetter = server.createQueue(localQueueName(name, true), {
      attributes: { ...fifo, MessageRetentionPeriod: String(definition.deadLetterRetentionDays * 86_400) },
    });
    const queue = server.createQueue(localQueueName(name), {
      attributes: {
        ...fifo,
        VisibilityTimeout: String(options.visibilityTimeoutSeconds ?? definition.visibilityTimeoutSeconds),
        MessageRetentionPeriod: String(definition.retentionDays * 86_400),
        RedrivePolicy: JSON.stringify({ deadLetterTargetArn: deadLetter.queueArn, maxReceiveCount: definition.maxReceiveCount }),
      },
    });
    urls[name] = queue.queueUrl;
    deadLetterUrls[name] = deadLetter.queueUrl;
  }
  server.createBucket(localPayloadBucket);
  return { endpoint: server.address, urls, deadLetterUrls, stop: () => server.stop() };
}
