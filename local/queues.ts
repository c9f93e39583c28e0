import { startFauxqs } from 'fauxqs';
import { sqsMessageBytes } from '#functions/core/aws-limits.ts';
import { localQueueName, type QueueName, queueDefinitions } from '#functions/core/store/queue-definitions.ts';
import { type InFlightMessage, type MessageGroups, messageGroups } from './fair-queue.ts';

/** The payload bucket's name on the twin (AWS names its own). */
export const localPayloadBucket = 'bi-tenant-admin-payloads';

export interface LocalQueues {
  endpoint: string;
  urls: Record<QueueName, string>;
  deadLetterUrls: Record<QueueName, string>;
  /** How long a received message stays hidden, per queue (the definitions', or the override). */
  visibilityTimeoutSeconds: Record<QueueName, number>;
  /** The messages a queue holds in flight now, and until when (read in process, for the twin's fair queues). */
  inFlight(name: QueueName): InFlightMessage[];
  /** The tenant of each message sent, which fauxqs does not keep on a standard queue. */
  groups: MessageGroups;
  stop(): Promise<void>;
}

/**
 * fauxqs (an in-process SQS and S3 emulator) with every queue of `queueDefinitions` and its DLQ,
 * as the stack declares them (messages up to sqsMessageBytes, stated rather than left to fauxqs's
 * default: fauxqs refuses a message over a queue's MaximumMessageSize, and a batch over 1 MiB in
 * all, as SQS does), and the payload bucket. `visibilityTimeoutSeconds` overrides the definitions' value, so tests can
 * watch redeliveries without waiting minutes.
 */
export async function startLocalQueues(options: { visibilityTimeoutSeconds?: number } = {}): Promise<LocalQueues> {
  const server = await startFauxqs({ port: 0, logger: false });
  const urls = {} as Record<QueueName, string>;
  const deadLetterUrls = {} as Record<QueueName, string>;
  const visibilityTimeoutSeconds = {} as Record<QueueName, number>;
  for (const [name, definition] of Object.entries(queueDefinitions) as [QueueName, (typeof queueDefinitions)[QueueName]][]) {
    const fifo: Record<string, string> = definition.fifo
      ? {
          FifoQueue: 'true',
          ...(definition.highThroughput ? { DeduplicationScope: 'messageGroup', FifoThroughputLimit: 'perMessageGroupId' } : {}),
        }
      : {};
    const deadLetter = server.createQueue(localQueueName(name, true), {
      attributes: {
        ...fifo,
        MaximumMessageSize: String(sqsMessageBytes),
        MessageRetentionPeriod: String(definition.deadLetterRetentionDays * 86_400),
      },
    });
    const queue = server.createQueue(localQueueName(name), {
      attributes: {
        ...fifo,
        VisibilityTimeout: String(options.visibilityTimeoutSeconds ?? definition.visibilityTimeoutSeconds),
        MaximumMessageSize: String(sqsMessageBytes),
        MessageRetentionPeriod: String(definition.retentionDays * 86_400),
        RedrivePolicy: JSON.stringify({ deadLetterTargetArn: deadLetter.queueArn, maxReceiveCount: definition.maxReceiveCount }),
      },
    });
    urls[name] = queue.queueUrl;
    deadLetterUrls[name] = deadLetter.queueUrl;
    visibilityTimeoutSeconds[name] = options.visibilityTimeoutSeconds ?? definition.visibilityTimeoutSeconds;
  }
  server.createBucket(localPayloadBucket);
  return {
    endpoint: server.address,
    urls,
    deadLetterUrls,
    visibilityTimeoutSeconds,
    inFlight: (name) =>
      (server.inspectQueue(localQueueName(name))?.messages.inflight ?? []).map((entry) => ({
        messageId: entry.message.messageId,
        receiptHandle: entry.receiptHandle,
        visibleAt: entry.visibilityDeadline,
      })),
    groups: messageGroups(),
    stop: () => server.stop(),
  };
}
