/**
 * The service's name and its own metrics, in one place for the functions that log and emit them
 * (logger.ts, metrics.ts) and the stack that graphs them and sets alarms on them (lib/).
 */
export const serviceMetricsNamespace = 'BiTenantAdmin';
export const serviceName = 'bi-tenant-admin';

/**
 * Every metric also carries the stage (a dimension `stage`), so that two stages in one account and
 * region, each with its alarms, never watch each other's. The stack sets the stage on every
 * function in this variable; off AWS (the twin, tests) it is `local`.
 */
export const stageVariable = 'SERVICE_STAGE';
export const localStage = 'local';

/** Counters (EMF unit Count). */
export const countMetricNames = [
  'Requests',
  'Errors',
  /** An answer cut to what fits in one Lambda result (a page or a heartbeat's runs: the rest is the next call's). */
  'AnswersCut',
  'WebhookDeliveries',
  'WebhookRetries',
  'WebhookFailures',
  /** A webhook endpoint's breaker opened, or paused it again after a stalled probe (alerts/endpoint.ts). */
  'WebhookEndpointsOpened',
  /** A delivery's message put back without an attempt: its endpoint was at its limit of attempts in flight, or paused. */
  'WebhookAttemptsDeferred',
  'ScheduleFires',
  'ScheduleMisses',
  'ScheduleFireFailures',
  'ReloadEnqueued',
  'ReloadSkippedOffline',
  'FollowUpsFinished',
  'FollowUpFailures',
] as const;
export type MetricName = (typeof countMetricNames)[number];

/**
 * Outcomes (EMF unit Count, 1 or 0, published either way): a metric whose silence means something,
 * so an alarm can treat a missing value as a failure. `EdgeProbeSuccess`: the edge probe's run
 * (functions/edge/edge-probe.ts) found every check answering as it should.
 */
export const outcomeMetricNames = ['EdgeProbeSuccess'] as const;
export type OutcomeMetricName = (typeof outcomeMetricNames)[number];

/** Durations (EMF unit Milliseconds), one value per event. */
export const durationMetricNames = ['ScheduleFireLateness'] as const;
export type DurationMetricName = (typeof durationMetricNames)[number];

/**
 * A queue consumer's batches (the shared worker wrapper counts them): the messages it received and
 * those it reported failed, not counting the ones it put back on purpose (a webhook retry's delay).
 * Published per function, under the dimension `FunctionName` (the Lambda function's name, as
 * AWS/Lambda names it), so the stack can alarm on each consumer's failure ratio.
 */
export const consumerMetricNames = ['ConsumerMessagesReceived', 'ConsumerMessagesFailed'] as const;
export const consumerMetricDimension = 'FunctionName';
