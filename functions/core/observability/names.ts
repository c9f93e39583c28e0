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
