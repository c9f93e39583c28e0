import { Aws, Duration, Stack } from 'aws-cdk-lib';
import type { HttpApi } from 'aws-cdk-lib/aws-apigatewayv2';
import {
  Alarm,
  AlarmRule,
  AlarmStatusWidget,
  ComparisonOperator,
  CompositeAlarm,
  Dashboard,
  GraphWidget,
  type IAlarm,
  type IAlarmAction,
  type IMetric,
  MathExpression,
  Metric,
  TreatMissingData,
} from 'aws-cdk-lib/aws-cloudwatch';
import type { IQueue } from 'aws-cdk-lib/aws-sqs';
import { Construct } from 'constructs';
import {
  countMetricNames,
  durationMetricNames,
  serviceMetricsNamespace,
  serviceName,
} from '#functions/core/observability/names.ts';
import type { NamedFunction } from './project-function.ts';

export interface ServiceMonitoringProps {
  api: HttpApi;
  /** Every function of the service. */
  functions: readonly NamedFunction[];
  /** The functions run by a timer: each gets an alarm when it stops running. */
  timedFunctions: readonly (NamedFunction & { everyMinutes: number })[];
  /** The queue consumers, for their error graph. */
  queueConsumers: readonly NamedFunction[];
  queues: readonly { name: string; queue: IQueue; deadLetterQueue: IQueue }[];
  /** Alarms made elsewhere (the DLQ depths), shown in the dashboard's alarm list. */
  otherAlarms: readonly IAlarm[];
  alarmAction: IAlarmAction;
}

/** The namespace and dimension of the service's own metrics (EMF lines written by functions/core/observability/metrics.ts). */
export const SERVICE_METRICS_NAMESPACE = serviceMetricsNamespace;
export const SERVICE_METRICS_DIMENSIONS = { service: serviceName };
export const SERVICE_METRIC_NAMES = [...countMetricNames, ...durationMetricNames] as const;

/** Schedules firing this late after their slot (p99 over 5 minutes) raise an alarm: the fire workers are not keeping up. */
export const FIRE_LATENESS_P99_THRESHOLD_MS = 60_000;

/**
 * The API 5xx alarm: the share of 5xx answers, once there are enough requests for a share to mean
 * something; below that, a count of 5xx answers (handlers answer their own failures with a 500, so
 * Lambda's Errors never sees them: a quiet API failing every request must still alarm).
 */
export const API_5XX_PERCENT_THRESHOLD = 5;
export const API_5XX_MINIMUM_REQUESTS = 20;
export const API_5XX_MINIMUM_ERRORS = 5;

/** CloudWatch accepts at most 10 metrics in one alarm's math expression. */
export const METRICS_PER_ALARM = 10;

const FIVE_MINUTES = Duration.minutes(5);
const RUNBOOK = 'Runbook: docs/operations.md, section Alarms.';

/**
 * The service's alarms (besides the DLQ alarms, made with their queues) and its dashboard.
 *
 * Lambda errors and throttles are watched across all the service's functions. CloudWatch offers no
 * exact single metric for that: the metrics without a FunctionName dimension count every function
 * of the account and region (other stacks and stages too), Metrics Insights cannot select a list of
 * function names (its WHERE knows only =, != and AND) and an alarm's math expression takes at most
 * 10 metrics. So the functions are split into groups of 10; each group is an alarm on the sum of its
 * members' per-function metrics, with no action of its own, and one composite alarm per kind, in
 * ALARM when any group is, is what notifies. With a threshold of one error (or throttle), "any group
 * has one" is exactly "the service has one". It costs 2 alarms per 10 functions plus 2; one alarm
 * per function (2 per function) would take the stack past CloudFormation's 500 resources.
 */
export class ServiceMonitoring extends Construct {
  readonly alarms: IAlarm[] = [];
  readonly dashboardName: string;

  constructor(scope: Construct, id: string, props: ServiceMonitoringProps) {
    super(scope, id);
    // Dashboards are global to the account: the region keeps two regions' stacks apart.
    this.dashboardName = `${Stack.of(this).stackName}-${Aws.REGION}`;
    const { api, alarmAction } = props;
    const notify = (alarm: Alarm | CompositeAlarm) => {
      alarm.addAlarmAction(alarmAction);
      alarm.addOkAction(alarmAction);
      this.alarms.push(alarm);
      return alarm;
    };

    // API 5xx rate. The metrics without a Stage dimension cover the API's only stage, $default.
    const requests = api.metricCount({ period: FIVE_MINUTES, statistic: 'Sum' });
    const serverErrors = api.metricServerError({ period: FIVE_MINUTES, statistic: 'Sum' });
    notify(
      new Alarm(this, 'ApiServerErrorRateAlarm', {
        alarmDescription:
          `More than ${API_5XX_PERCENT_THRESHOLD}% of the API's answers were 5xx over 5 minutes (or, with fewer than ` +
          `${API_5XX_MINIMUM_REQUESTS} requests, at least ${API_5XX_MINIMUM_ERRORS} were): callers are failing. Find the route in the API access log ` +
          '(status, routeKey) and the dashboard (Lambda errors, throttles, duration), then the error in that ' +
          `function's log group by requestId. ${RUNBOOK}`,
        metric: new MathExpression({
          expression:
            `IF(FILL(requests, 0) >= ${API_5XX_MINIMUM_REQUESTS}, 100 * FILL(serverErrors, 0) / requests, ` +
            `IF(FILL(serverErrors, 0) >= ${API_5XX_MINIMUM_ERRORS}, 100, 0))`,
          usingMetrics: { requests, serverErrors },
          period: FIVE_MINUTES,
          label: 'API 5xx (% of requests)',
        }),
        threshold: API_5XX_PERCENT_THRESHOLD,
        comparisonOperator: ComparisonOperator.GREATER_THAN_THRESHOLD,
        evaluationPeriods: 1,
        treatMissingData: TreatMissingData.NOT_BREACHING,
      }),
    );

    // Lambda errors and throttles, across every function (see the class comment).
    const groups = chunk(props.functions, METRICS_PER_ALARM);
    const acrossFunctions = (kind: 'Errors' | 'Throttles', description: string) => {
      const groupAlarms = groups.map((members, index) => {
        const metrics = Object.fromEntries(
          members.map((member, position) => [`f${position}`, metricOf(member, kind, { period: FIVE_MINUTES, statistic: 'Sum' })]),
        );
        return new Alarm(this, `Lambda${kind}Group${index + 1}`, {
          alarmDescription:
            `Part ${index + 1} of ${groups.length} of the Lambda${kind} alarm, which notifies: ${kind.toLowerCase()} of ` +
            `${members.map((member) => member.name).join(', ')}.`,
          // FILL: a function that did not run has no data point, which would leave the sum without one.
          metric: new MathExpression({
            expression: Object.keys(metrics)
              .map((name) => `FILL(${name}, 0)`)
              .join(' + '),
            usingMetrics: metrics,
            period: FIVE_MINUTES,
            label: `Lambda ${kind.toLowerCase()}, group ${index + 1}`,
          }),
          threshold: 1,
          comparisonOperator: ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
          evaluationPeriods: 1,
          treatMissingData: TreatMissingData.NOT_BREACHING,
        });
      });
      return notify(
        new CompositeAlarm(this, `Lambda${kind}Alarm`, {
          alarmDescription: description,
          alarmRule: AlarmRule.anyOf(...groupAlarms),
        }),
      );
    };
    acrossFunctions(
      'Errors',
      'A function of the service failed at least once in 5 minutes: an unhandled error, a time-out, running out of ' +
        'memory or failing to start (HTTP handlers answer their own errors with a 500, so this is a crash). The ' +
        "dashboard's Lambda errors graph names the function; its log group has the error. Queue messages of a " +
        `failed batch are retried and end in the DLQ if they keep failing. ${RUNBOOK}`,
    );
    acrossFunctions(
      'Throttles',
      'Lambda refused to run a function of the service at least once in 5 minutes: the concurrency of the account ' +
        'and region is used up (shared with every other function there). API callers got errors; queue messages ' +
        'and timer ticks are retried. Look for the function whose invocations spiked (dashboard) or another ' +
        `workload of the account, and ask for a higher concurrency quota if the load is real. ${RUNBOOK}`,
    );

    // Schedules firing late: a burst larger than the fire workers absorb in a minute, or their failures.
    notify(
      new Alarm(this, 'ScheduleFireLatenessAlarm', {
        alarmDescription:
          `The 99th percentile of schedule fire lateness (fire time minus slot) was over ${FIRE_LATENESS_P99_THRESHOLD_MS / 1000} s ` +
          "in 5 minutes: schedules are firing late. Look at the fire queue depth and the fire worker's errors, throttles " +
          'and duration on the dashboard; if the queue drains slowly without errors, raise fireConcurrency (and dueShards ' +
          `if DynamoDB throttles the index): docs/schedules.md, section At scale. ${RUNBOOK}`,
        metric: serviceMetric('ScheduleFireLateness', 'p99'),
        threshold: FIRE_LATENESS_P99_THRESHOLD_MS,
        comparisonOperator: ComparisonOperator.GREATER_THAN_THRESHOLD,
        evaluationPeriods: 1,
        treatMissingData: TreatMissingData.NOT_BREACHING,
      }),
    );

    // Slots that did not fire: their fires failed, or waited, for an hour (the lateness alarm has no data then).
    notify(
      new Alarm(this, 'ScheduleMissesAlarm', {
        alarmDescription:
          'At least one schedule slot was not fired in 5 minutes because it was an hour or more late by the time a fire ' +
          'worker got to it: the dispatcher did not run, the fire workers fell an hour behind, or firing kept failing ' +
          "(the ScheduleFireFailures metric and the fire worker's log say why; each failure is retried until the hour " +
          `is up). The schedules moved on to their next slot. docs/schedules.md, section At scale. ${RUNBOOK}`,
        metric: serviceMetric('ScheduleMisses'),
        threshold: 0,
        comparisonOperator: ComparisonOperator.GREATER_THAN_THRESHOLD,
        evaluationPeriods: 1,
        treatMissingData: TreatMissingData.NOT_BREACHING,
      }),
    );

    // Webhook endpoints paused by their breaker. A paused endpoint with deliveries waiting is probed (and
    // counted again when the probe stalls) at least every 10 minutes and a quarter: over three periods
    // of 5 minutes one count keeps the alarm on while any endpoint stays paused.
    notify(
      new Alarm(this, 'WebhookEndpointsOpenAlarm', {
        alarmDescription:
          "A tenant's webhook endpoint was paused in the last 15 minutes: 5 attempts in a row timed out or could not " +
          'connect, so its deliveries wait (no attempt is used up) while one probe at a time checks it. One tenant: its ' +
          'receiver is down; its settings and delivery log say so, nothing to do on our side. Many at once: suspect our ' +
          `egress (DNS, NAT, network). The deliverer's log ("Webhook endpoint paused") names the tenants. ${RUNBOOK}`,
        metric: serviceMetric('WebhookEndpointsOpened'),
        threshold: 0,
        comparisonOperator: ComparisonOperator.GREATER_THAN_THRESHOLD,
        evaluationPeriods: 3,
        datapointsToAlarm: 1,
        treatMissingData: TreatMissingData.NOT_BREACHING,
      }),
    );

    // Work requests left behind that the sweeper cannot finish: it retries every minute, so this is a stuck one.
    notify(
      new Alarm(this, 'FollowUpFailuresAlarm', {
        alarmDescription:
          'The follow-up sweeper failed to finish work that requests left behind (a pending template to apply, a ' +
          'delivery to queue, a deletion to sweep) in each of 3 runs of 5 minutes: it retries every minute, so one is ' +
          `stuck. Its log ("A follow-up could not be finished") names the follow-up and the error. ${RUNBOOK}`,
        metric: serviceMetric('FollowUpFailures'),
        threshold: 0,
        comparisonOperator: ComparisonOperator.GREATER_THAN_THRESHOLD,
        evaluationPeriods: 3,
        datapointsToAlarm: 3,
        treatMissingData: TreatMissingData.NOT_BREACHING,
      }),
    );

    // Timed functions that stop running (the schedule dispatcher: schedules stop firing).
    for (const timed of props.timedFunctions) {
      notify(
        new Alarm(this, `${timed.name}NotRunningAlarm`, {
          alarmDescription:
            `${timed.name} (every ${timed.everyMinutes} minute(s)) has not been invoked for 5 runs in a row. For the ` +
            'schedule dispatcher this means no schedule fires (when it runs again, each schedule fires only its latest ' +
            'missed slot, and only if that slot is less than an hour late); for the follow-up sweeper, work that ' +
            "requests left behind stays unfinished until it runs. Check that its EventBridge rule is enabled and the function's " +
            `throttles and errors. ${RUNBOOK}`,
          metric: timed.fn.metricInvocations({ period: Duration.minutes(timed.everyMinutes), statistic: 'Sum' }),
          threshold: 1,
          comparisonOperator: ComparisonOperator.LESS_THAN_THRESHOLD,
          evaluationPeriods: 5,
          datapointsToAlarm: 5,
          // No invocation means no data point at all: that is exactly the failure to catch.
          treatMissingData: TreatMissingData.BREACHING,
        }),
      );
    }

    this.createDashboard(props);
  }

  private createDashboard(props: ServiceMonitoringProps): void {
    const { api } = props;
    const graph = (title: string, left: IMetric[], options: { period?: Duration } = {}) =>
      new GraphWidget({ title, left, width: 8, height: 6, period: options.period ?? FIVE_MINUTES });
    /** The 10 functions with the highest values of the metric (the others are fetched, not drawn). */
    const topFunctions = (title: string, kind: 'Errors' | 'Throttles' | 'Duration', statistic: string) => {
      const metrics = Object.fromEntries(
        props.functions.map((member, index) => [
          `f${index}`,
          metricOf(member, kind, { period: FIVE_MINUTES, statistic, label: member.name }),
        ]),
      );
      return graph(title, [
        // No label: each line keeps its function's name (a label here would name all ten alike).
        new MathExpression({
          expression: 'SORT(METRICS(), MAX, DESC, 10)',
          usingMetrics: metrics,
          period: FIVE_MINUTES,
          label: '',
        }),
      ]);
    };
    const dashboard = new Dashboard(this, 'Dashboard', {
      dashboardName: this.dashboardName,
      defaultInterval: Duration.hours(6),
    });
    dashboard.addWidgets(
      graph('API requests', [api.metricCount({ statistic: 'Sum', label: 'Requests' })]),
      graph('API 4xx and 5xx', [
        api.metricClientError({ statistic: 'Sum', label: '4xx' }),
        api.metricServerError({ statistic: 'Sum', label: '5xx' }),
      ]),
      graph('API latency', [
        api.metricLatency({ statistic: 'p50', label: 'p50' }),
        api.metricLatency({ statistic: 'p99', label: 'p99' }),
      ]),
    );
    dashboard.addWidgets(
      topFunctions('Lambda errors (top 10 functions)', 'Errors', 'Sum'),
      topFunctions('Lambda throttles (top 10 functions)', 'Throttles', 'Sum'),
      topFunctions('Lambda duration p99 (top 10 functions)', 'Duration', 'p99'),
    );
    dashboard.addWidgets(
      graph(
        'Queue depth (visible messages)',
        props.queues.map(({ name, queue }) =>
          queue.metricApproximateNumberOfMessagesVisible({ statistic: 'Maximum', label: name }),
        ),
      ),
      graph(
        'DLQ depth (visible messages)',
        props.queues.map(({ name, deadLetterQueue }) =>
          deadLetterQueue.metricApproximateNumberOfMessagesVisible({ statistic: 'Maximum', label: `${name} DLQ` }),
        ),
      ),
      graph(
        'Timed function invocations (per minute)',
        props.timedFunctions.flatMap(({ name, fn }) => [
          fn.metricInvocations({ statistic: 'Sum', label: `${name} invocations` }),
          fn.metricErrors({ statistic: 'Sum', label: `${name} errors` }),
        ]),
        { period: Duration.minutes(1) },
      ),
    );
    dashboard.addWidgets(
      graph(
        `Queue consumer errors (${props.queueConsumers.map(({ name }) => name).join(', ')})`,
        props.queueConsumers.map(({ name, fn }) => fn.metricErrors({ statistic: 'Sum', label: `${name} errors` })),
      ),
      graph(
        'Service: requests and 5xx answers',
        (['Requests', 'Errors'] as const).map((name) => serviceMetric(name, 'Sum', name)),
      ),
      graph(
        'Service: webhook deliveries',
        (
          ['WebhookDeliveries', 'WebhookRetries', 'WebhookFailures', 'WebhookAttemptsDeferred', 'WebhookEndpointsOpened'] as const
        ).map((name) => serviceMetric(name, 'Sum', name)),
      ),
    );
    dashboard.addWidgets(
      graph(
        'Service: schedules and reloads',
        (['ScheduleFires', 'ScheduleMisses', 'ScheduleFireFailures', 'ReloadEnqueued', 'ReloadSkippedOffline'] as const).map(
          (name) => serviceMetric(name, 'Sum', name),
        ),
      ),
      graph('Schedule fire lateness (ms)', [
        serviceMetric('ScheduleFireLateness', 'p50', 'p50'),
        serviceMetric('ScheduleFireLateness', 'p99', 'p99'),
      ]),
      graph(
        'Service: follow-ups finished by the sweeper',
        (['FollowUpsFinished', 'FollowUpFailures'] as const).map((name) => serviceMetric(name, 'Sum', name)),
      ),
      new AlarmStatusWidget({ title: 'Alarms', alarms: [...this.alarms, ...props.otherAlarms], width: 16, height: 6 }),
    );
  }
}

/** One of the service's own metrics (EMF), over 5 minutes; graphs name their lines, alarms need no label. */
function serviceMetric(metricName: (typeof SERVICE_METRIC_NAMES)[number], statistic = 'Sum', label?: string) {
  return new Metric({
    namespace: SERVICE_METRICS_NAMESPACE,
    metricName,
    dimensionsMap: SERVICE_METRICS_DIMENSIONS,
    statistic,
    period: FIVE_MINUTES,
    label,
  });
}

function metricOf(
  member: NamedFunction,
  kind: 'Errors' | 'Throttles' | 'Duration',
  options: { period: Duration; statistic: string; label?: string },
) {
  switch (kind) {
    case 'Errors':
      return member.fn.metricErrors(options);
    case 'Throttles':
      return member.fn.metricThrottles(options);
    case 'Duration':
      return member.fn.metricDuration(options);
  }
}

export function chunk<T>(items: readonly T[], size: number): T[][] {
  const chunks: T[][] = [];
  for (let start = 0; start < items.length; start += size) chunks.push(items.slice(start, start + size));
  return chunks;
}
