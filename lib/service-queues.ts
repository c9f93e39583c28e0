import { Duration, type Stack } from 'aws-cdk-lib';
import { Alarm, ComparisonOperator, type IAlarmAction, TreatMissingData } from 'aws-cdk-lib/aws-cloudwatch';
import { DeduplicationScope, FifoThroughputLimit, Queue, QueueEncryption } from 'aws-cdk-lib/aws-sqs';
import { sqsMessageBytes } from '#functions/core/aws-limits.ts';
import { type QueueName, queueDefinitions, queueUrlVariable } from '#functions/core/store/queue-definitions.ts';
import { notifying } from './alarm-topic.ts';
import { pascalCase } from './construct-ids.ts';

/**
 * Every queue of the definitions, encrypted and TLS-only, with its DLQ and an alarm on the DLQ's depth.
 * Each takes messages up to sqsMessageBytes, stated rather than left to CloudFormation's default, so
 * the limit on AWS is the one the twin's queues apply (local/queues.ts).
 */
export class ServiceQueues {
  readonly queues = {} as Record<QueueName, Queue>;
  readonly deadLetterQueues = {} as Record<QueueName, Queue>;
  readonly deadLetterAlarms: Alarm[] = [];

  /** `alarmAction`: where the DLQ alarms go (the ticket topic: a message waiting for an operator can wait for working hours). */
  constructor(stack: Stack, alarmAction: IAlarmAction) {
    for (const [name, definition] of Object.entries(queueDefinitions) as [QueueName, (typeof queueDefinitions)[QueueName]][]) {
      const id = pascalCase(name);
      const deadLetterQueue = new Queue(stack, `${id}DeadLetterQueue`, {
        fifo: definition.fifo,
        retentionPeriod: Duration.days(definition.deadLetterRetentionDays),
        maxMessageSizeBytes: sqsMessageBytes,
        encryption: QueueEncryption.SQS_MANAGED,
        enforceSSL: true,
      });
      this.deadLetterQueues[name] = deadLetterQueue;
      this.queues[name] = new Queue(stack, `${id}Queue`, {
        fifo: definition.fifo,
        ...(definition.highThroughput
          ? {
              deduplicationScope: DeduplicationScope.MESSAGE_GROUP,
              fifoThroughputLimit: FifoThroughputLimit.PER_MESSAGE_GROUP_ID,
            }
          : {}),
        visibilityTimeout: Duration.seconds(definition.visibilityTimeoutSeconds),
        retentionPeriod: Duration.days(definition.retentionDays),
        maxMessageSizeBytes: sqsMessageBytes,
        deadLetterQueue: { queue: deadLetterQueue, maxReceiveCount: definition.maxReceiveCount },
        encryption: QueueEncryption.SQS_MANAGED,
        enforceSSL: true,
      });
      const alarm = new Alarm(stack, `${id}DeadLetterAlarm`, {
        alarmDescription:
          `A message of the ${name} queue is in its dead-letter queue: processing gave up on it after its retries, and it ` +
          `waits there for an operator (kept ${definition.deadLetterRetentionDays} days). Inspect it, fix the cause, then ` +
          'redrive it: docs/operations.md, section Dead-letter queues.',
        metric: deadLetterQueue.metricApproximateNumberOfMessagesVisible({ period: Duration.minutes(1), statistic: 'Maximum' }),
        threshold: 1,
        evaluationPeriods: 1,
        comparisonOperator: ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
        treatMissingData: TreatMissingData.NOT_BREACHING,
      });
      this.deadLetterAlarms.push(notifying(alarm, alarmAction));
    }
  }

  /** Each queue with its DLQ, under the queue's name. */
  get all(): { name: QueueName; queue: Queue; deadLetterQueue: Queue }[] {
    return (Object.keys(this.queues) as QueueName[]).map((name) => ({
      name,
      queue: this.queues[name],
      deadLetterQueue: this.deadLetterQueues[name],
    }));
  }

  /** The environment of a function that sends to these queues: each one's URL. */
  urlVariables(names: readonly QueueName[]): Record<string, string> {
    return Object.fromEntries(names.map((name) => [queueUrlVariable(name), this.queues[name].queueUrl]));
  }
}
