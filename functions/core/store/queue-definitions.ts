/**
 * The service's queues. The CDK stack and the local twin both create them from this object, and
 * functions find each queue's URL in the environment variable named by `queueUrlVariable`.
 *
 * `fair`: a standard queue every message of which carries its tenant as `MessageGroupId`, which
 * makes it an SQS fair queue: when one tenant holds a disproportionate share of the messages in
 * flight (or of the consumers' time), SQS hands out the other tenants' messages first, so one
 * tenant's backlog does not hold theirs back (store/queues.ts sends them so; the twin's poller
 * orders them the same way, local/fair-queue.ts).
 */
export const queueDefinitions = {
  /**
   * Loads to hand to agents. FIFO with one message group per tenant and agent, so each agent's
   * loads keep their dependency order; after 5 failed receives a message goes to the DLQ.
   * High-throughput FIFO (deduplication and throughput per message group): a burst of schedule
   * fires sends far more than the 300 batches a second a FIFO queue takes otherwise, and the
   * deduplication ids are unique within a group anyway.
   */
  reload: {
    fifo: true,
    fair: false,
    highThroughput: true,
    visibilityTimeoutSeconds: 180,
    maxReceiveCount: 5,
    retentionDays: 4,
    deadLetterRetentionDays: 14,
  },
  /**
   * Schedules found due, ten to a message, for the fire workers. Visibility is six times the
   * worker's 20-second timeout, as AWS advises for a Lambda event source. A fire more than an hour
   * late never happens, so a day of retention is plenty; after 5 failed receives, the DLQ.
   */
  fire: {
    fifo: false,
    fair: true,
    highThroughput: false,
    visibilityTimeoutSeconds: 120,
    maxReceiveCount: 5,
    retentionDays: 1,
    deadLetterRetentionDays: 14,
  },
  /**
   * Rollouts' steps: one message per running rollout, in its client's group (a fair queue: one
   * integrator's rollout does not hold back another's). The worker works the rollout until its
   * deadline and puts the message back for the next step (at the next wave's time, after a pause),
   * so the message lives as long as the rollout runs: maxReceiveCount is SQS's highest, a backstop
   * for a worker that keeps crashing on it. A crash leaves the message to come back after its
   * visibility (six times the worker's 60 seconds); the rollout goes on from what its record and its
   * tenants' outcomes say.
   */
  rollout: {
    fifo: false,
    fair: true,
    highThroughput: false,
    visibilityTimeoutSeconds: 360,
    maxReceiveCount: 1000,
    retentionDays: 14,
    deadLetterRetentionDays: 14,
  },
  /**
   * Alert deliveries, and the integrator's events (a client's own deliveries, in the client's message
   * group). The deliverer sets each failed message's visibility to the next retry delay
   * and moves it to the DLQ itself after the last attempt (and at once a message that is not a
   * delivery). A message also comes back, uncounted as an attempt, while its endpoint is at its
   * limit of attempts in flight or paused (alerts/endpoint.ts): every such deferral is a receive, so
   * maxReceiveCount is SQS's highest, only a backstop for a deliverer that keeps crashing on a
   * message (about two days of 180-second visibility timeouts). Retention is SQS's longest: the ~28
   * hours of retries, plus up to 3 days paused before the channel is disabled, fit well inside it.
   * Visibility, until the deliverer sets it, is six times its 30-second timeout.
   */
  webhook: {
    fifo: false,
    fair: true,
    highThroughput: false,
    visibilityTimeoutSeconds: 180,
    maxReceiveCount: 1000,
    retentionDays: 14,
    deadLetterRetentionDays: 14,
  },
} as const;

export type QueueName = keyof typeof queueDefinitions;

export const queueUrlVariable = (name: QueueName) => `${name.toUpperCase()}_QUEUE_URL`;
export const deadLetterUrlVariable = (name: QueueName) => `${name.toUpperCase()}_DLQ_URL`;

/** Names used where the twin names queues itself (AWS generates its own). */
export const localQueueName = (name: QueueName, deadLetter = false) =>
  `${name}${deadLetter ? '-dlq' : ''}${queueDefinitions[name].fifo ? '.fifo' : ''}`;
