import { SqsEventSource } from 'aws-cdk-lib/aws-lambda-event-sources';
import { deadLetterUrlVariable } from '#functions/core/store/queue-definitions.ts';
import { queueConsumers } from '#functions/routes.ts';
import { consumerIdOf } from './construct-ids.ts';
import { type DeploymentSettings, reservedConcurrency } from './deployment-settings.ts';
import type { FunctionRoles } from './function-roles.ts';
import { type FunctionStacks, functionAreaOf } from './function-stacks.ts';
import type { PayloadBucket } from './payload-bucket.ts';
import { workerEntry } from './function-bundles.ts';
import { type NamedFunction, ProjectFunction } from './project-function.ts';
import type { ServiceQueues } from './service-queues.ts';
import type { ServiceTable } from './service-table.ts';

export interface QueueWorkersProps {
  /** Where each consumer's concurrency setting is read, and whether it is reserved (lib/throttling.ts). */
  settings: DeploymentSettings;
  table: ServiceTable;
  queues: ServiceQueues;
  payloads: PayloadBucket;
  roles: FunctionRoles;
  functionStacks: FunctionStacks;
}

/** One function per queue consumer of the route table, fed by its queue through an event source mapping. */
export class QueueWorkers {
  /** Under their construct ids, with their handler names (`reload-worker`), as the dashboard shows them. */
  readonly functions: (NamedFunction & { handler: string })[] = [];

  constructor(props: QueueWorkersProps) {
    const { queues, payloads, roles, functionStacks } = props;
    const reservations = reservedConcurrency(props.settings);
    for (const consumer of queueConsumers) {
      const queue = queues.queues[consumer.queue];
      const deadLetterQueue = queues.deadLetterQueues[consumer.queue];
      const sends = consumer.sends ?? [];
      const id = consumerIdOf(consumer.handler);
      const fn = new ProjectFunction(functionStacks.scopeFor(functionAreaOf(consumer)), id, {
        entry: workerEntry(consumer.handler),
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
        reservedConcurrency: reservations.get(consumer.handler),
        // The event source mapping adds the consumer's receive and delete grants to this role.
        role: roles.roleFor({
          table: consumer.table,
          sends,
          consumes: consumer.queue,
          deadLetters: consumer.sendsToDeadLetter ? consumer.queue : undefined,
          payloads: consumer.payloads,
        }),
      });
      // The event source mapping feeds the live alias: a release shifts the consumer's batches with the rest.
      functionStacks.live(fn, id).addEventSource(
        new SqsEventSource(queue, {
          batchSize: consumer.batchSize,
          reportBatchItemFailures: true,
          // Every consumer is capped (docs/operations.md, Quotas a deployment needs), and reserves the same number
          // unless the stage turns reservations off: the event source never runs more batches than the function
          // may (none is throttled back), and a flood on the API cannot take them.
          maxConcurrency: props.settings[consumer.concurrencySetting],
        }),
      );
      this.functions.push({ name: id, handler: consumer.handler, fn });
    }
  }
}
