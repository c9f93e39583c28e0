import { Metrics, MetricUnit } from '@aws-lambda-powertools/metrics';
import { type DurationMetricName, type MetricName, serviceMetricsNamespace, serviceName } from './names.ts';

/**
 * Business and health counters as CloudWatch embedded metric format (EMF) lines in the logs: no
 * API call, no extra latency. The stack's dashboard graphs them (namespace BiTenantAdmin).
 */
export const metrics = new Metrics({ namespace: serviceMetricsNamespace, serviceName });

export function count(name: MetricName, value = 1): void {
  if (value > 0) metrics.addMetric(name, MetricUnit.Count, value);
}

/** One duration per event, in milliseconds: CloudWatch keeps every value, so an alarm can watch a percentile. */
export function duration(name: DurationMetricName, milliseconds: number): void {
  metrics.addMetric(name, MetricUnit.Milliseconds, milliseconds);
}

/** For functions not wrapped by the HTTP pipeline (workers): flush what this invocation counted. */
export function publishMetrics(): void {
  if (metrics.hasStoredMetrics()) metrics.publishStoredMetrics();
}
