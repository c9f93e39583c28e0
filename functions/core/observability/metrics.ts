import { Metrics, MetricUnit } from '@aws-lambda-powertools/metrics';
import {
  consumerMetricDimension,
  type DurationMetricName,
  localStage,
  type MetricName,
  type OutcomeMetricName,
  serviceMetricsNamespace,
  serviceName,
  stageVariable,
} from './names.ts';

/** The dimensions every metric of this process carries besides `service`: the stage it runs in. */
const stageDimensions = { stage: process.env[stageVariable] || localStage };

/**
 * Business and health counters as CloudWatch embedded metric format (EMF) lines in the logs: no
 * API call, no extra latency. The stack's dashboard graphs them (namespace BiTenantAdmin).
 */
export const metrics = new Metrics({ namespace: serviceMetricsNamespace, serviceName, defaultDimensions: stageDimensions });

export function count(name: MetricName, value = 1): void {
  if (value > 0) metrics.addMetric(name, MetricUnit.Count, value);
}

/** An outcome, 1 when it went well, 0 when not: published either way (a missing value is silence, not success). */
export function outcome(name: OutcomeMetricName, succeeded: boolean): void {
  metrics.addMetric(name, MetricUnit.Count, succeeded ? 1 : 0);
}

/** One duration per event, in milliseconds: CloudWatch keeps every value, so an alarm can watch a percentile. */
export function duration(name: DurationMetricName, milliseconds: number): void {
  metrics.addMetric(name, MetricUnit.Milliseconds, milliseconds);
}

/** For functions not wrapped by the HTTP pipeline (workers): flush what this invocation counted. */
export function publishMetrics(): void {
  if (metrics.hasStoredMetrics()) metrics.publishStoredMetrics();
}

/**
 * One queue batch of a consumer, published at once in a document of its own: its extra dimension
 * (the function's name) must not reach the invocation's other metrics, which the alarms read
 * without it.
 */
export function countConsumerBatch(functionName: string, received: number, failed: number): void {
  const batch = new Metrics({
    namespace: serviceMetricsNamespace,
    serviceName,
    defaultDimensions: { ...stageDimensions, [consumerMetricDimension]: functionName },
  });
  batch.addMetric('ConsumerMessagesReceived', MetricUnit.Count, received);
  batch.addMetric('ConsumerMessagesFailed', MetricUnit.Count, failed);
  batch.publishStoredMetrics();
}
