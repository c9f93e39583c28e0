import type { Stack } from 'aws-cdk-lib';
import { SqsEventSource } from 'aws-cdk-lib/aws-lambda-event-sources';
import { deadLetterUrlVariable } from '#functions/core/store/queue-definitions.ts';
import { queueConsumers } from '#functions/routes.ts';
import { consumerIdOf } from './construct-ids.ts';
import type { DeploymentSettings } from './deployment-settings.ts';
import type { FunctionRoles } from './function-roles.ts';
import type { PayloadBucket } from './payload-bucket.ts';
import { type NamedFunction, ProjectFunction } from './project-function.ts';
import type { ServiceQueues } from './service-queues.ts';
import type { ServiceTable } from './service-table.ts';

export interface QueueWorkersProps {
  /** Where a consumer's concurrency setting (the fire workers') is read. */
  settings: DeploymentSettings;
  table: ServiceTable;
  queues: ServiceQueues;
  payloads: PayloadBucket;
  roles: FunctionRoles;
}

/** One function per queue consumer of the route table, fed by its queue through an event source mapping. */
export class QueueWorkers {
  /** Under their construct ids, with their handler names (`reload-worker`), as the dashboard shows them. */
  readonly functions: (NamedFunction & { handler: string })[] = [];

  constructor(stack: Stack, props: QueueWorkersProps) {
    const { queues, payloads, roles } = props;
    for (const consumer of queueConsumers) {
      const queue = queues.queues[consumer.queue];
      const deadLetterQueue = queues.deadLetterQueues[consumer.queue];
      const sends = consumer.sends ?? [];
      const concurrency = consumer.concurrencySetting && props.settings[consumer.concurrencySetting];
      const fn = new ProjectFunction(stack, consumerIdOf(consumer.handler), {
        entry: `functions/workers/${consumer.handler}.ts`,
        description: `${consumer.queue} queue: ${consumer.summary}`,
        environment: {
          ...props.table.environment,
          // Its own queue, for the consumers that set a message's visibility (the retry delay).
          ...queues.urlVariables([consumer.queue]),
          ...(consumer.sendsToDeadLetter ? { [deadLetterUrlVariable(consumer.queue)]: deadLetterQueue.queueUrl } : {}),
          ...queues.urlVariables(sends),
          ...payloads.environmentFor(consumer.payloads),
        },
        timeoutSeconds: consumer.timeoutSeconds,
        reservedConcurrency: concurrency,
        // The event source mapping adds the consumer's receive and delete grants to this role.
        role: roles.roleFor({
          table: consumer.table,
          sends,
          consumes: consumer.queue,
          deadLetters: consumer.sendsToDeadLetter ? consumer.queue : undefined,
          payloads: consumer.payloads,
        }),
      });
      fn.addEventSource(
        new SqsEventSource(queue, {
          batchSize: consumer.batchSize,
          reportBatchItemFailures: true,
          // No more pollers than the reserved concurrency lets run: none of its batches is throttled back to the queue.
          ...(concurrency ? { maxConcurrency: concurrency } : {}),
        }),
      );
      this.functions.push({ name: consumerIdOf(consumer.handler), handler: consumer.handler, fn });
    }
  }
}
