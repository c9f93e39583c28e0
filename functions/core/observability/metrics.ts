import { Metrics, MetricUnit } from '@aws-lambda-powertools/metrics';

/**
 * Business and health counters as CloudWatch embedded metric format (EMF) lines in the logs: no
 * API call, no extra latency. The stack's dashboard graphs them (namespace BiTenantAdmin).
 */
export const metrics = new Metrics({ namespace: 'BiTenantAdmin', serviceName: 'bi-tenant-admin' });

export type MetricName =
  | 'Requests'
  | 'Errors'
  | 'WebhookDeliveries'
  | 'WebhookRetries'
  | 'WebhookFailures'
  | 'ScheduleFires'
  | 'ReloadEnqueued'
  | 'ReloadSkippedOffline';

export function count(name: MetricName, value = 1): void {
  if (value > 0) metrics.addMetric(name, MetricUnit.Count, value);
}

export type DurationMetricName = 'ScheduleFireLateness';

/** One duration per event, in milliseconds: CloudWatch keeps every value, so an alarm can watch a percentile. */
export function duration(name: DurationMetricName, milliseconds: number): void {
  metrics.addMetric(name, MetricUnit.Milliseconds, milliseconds);
}

/** For functions not wrapped by the HTTP pipeline (workers): flush what this invocation counted. */
export function publishMetrics(): void {
  if (metrics.hasStoredMetrics()) metrics.publishStoredMetrics();
}
