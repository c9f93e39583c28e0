/**
 * The service's name and its own metrics, in one place for the functions that log and emit them
 * (logger.ts, metrics.ts) and the stack that graphs them and sets alarms on them (lib/).
 */
export const serviceMetricsNamespace = 'BiTenantAdmin';
export const serviceName = 'bi-tenant-admin';

/** Counters (EMF unit Count). */
export const countMetricNames = [
  'Requests',
  'Errors',
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

/** Durations (EMF unit Milliseconds), one value per event. */
export const durationMetricNames = ['ScheduleFireLateness'] as const;
export type DurationMetricName = (typeof durationMetricNames)[number];
