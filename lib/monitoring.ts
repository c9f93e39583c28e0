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
  type HorizontalAnnotation,
  type IAlarm,
  type IMetric,
  MathExpression,
  Metric,
  TreatMissingData,
  Unit,
} from 'aws-cdk-lib/aws-cloudwatch';
import type { ITable } from 'aws-cdk-lib/aws-dynamodb';
import { Rule } from 'aws-cdk-lib/aws-events';
import type { IKey } from 'aws-cdk-lib/aws-kms';
import { FilterPattern, type ILogGroup, MetricFilter } from 'aws-cdk-lib/aws-logs';
import type { ISecret } from 'aws-cdk-lib/aws-secretsmanager';
import type { IQueue } from 'aws-cdk-lib/aws-sqs';
import { Construct } from 'constructs';
import {
  consumerMetricDimension,
  consumerMetricNames,
  countMetricNames,
  durationMetricNames,
  serviceMetricsNamespace,
  serviceName,
} from '#functions/core/observability/names.ts';
import type { QueueName } from '#functions/core/store/queue-definitions.ts';
import { tableDefinition } from '#functions/core/store/table-definition.ts';
import { type AlarmSeverity, type AlarmTopics, notifying } from './alarm-topic.ts';
import { consumerIdOf, pascalCase } from './construct-ids.ts';
import type { NamedFunction } from './project-function.ts';

export interface ServiceMonitoringProps {
  /** The stage: a dimension of every metric of the service's own, so each stage's alarms watch only it. */
  stage: string;
  api: HttpApi;
  /** The API's access log, whose 429 and 401 lines metric filters count. */
  accessLogs: ILogGroup;
  table: ITable;
  /** Every function of the service. */
  functions: readonly NamedFunction[];
  /** The functions run by a timer: each gets an alarm when it stops running. */
  timedFunctions: readonly (NamedFunction & { everyMinutes: number })[];
  /** The queue consumers (named by handler): their error graph, and an alarm each on the share of messages they fail. */
  queueConsumers: readonly NamedFunction[];
  queues: readonly { name: QueueName; queue: IQueue; deadLetterQueue: IQueue }[];
  /** Alarms made elsewhere (the DLQ depths), shown in the dashboard's alarm list. */
  otherAlarms: readonly IAlarm[];
  /** Each alarm notifies the topic of its severity. */
  alarmTopics: AlarmTopics;
  /** Percent of the API's requests to answer without a 5xx (context availabilityObjective): the burn-rate alarms' objective. */
  availabilityObjective: number;
  /** The table's key and the keyrings' secrets: an administration call on them pages (EventBridge rules on CloudTrail). */
  tableKey: IKey;
  keyrings: readonly ISecret[];
  /** The account's Lambda concurrency quota in the region (context accountConcurrencyLimit). */
  accountConcurrencyLimit: number;
}

/**
 * The namespace and dimensions of the service's own metrics (EMF lines written by
 * functions/core/observability/metrics.ts, and the API's 429s counted from its access log).
 */
export const SERVICE_METRICS_NAMESPACE = serviceMetricsNamespace;
export const serviceMetricsDimensions = (stage: string) => ({ service: serviceName, stage });
/** Counted by a metric filter on the API access log: HTTP APIs publish 4xx, but no count of 429s alone. */
export const API_THROTTLED_METRIC = 'ApiThrottledRequests';
/** The same for 401s. */
export const API_UNAUTHORIZED_METRIC = 'ApiUnauthorizedRequests';
export const SERVICE_METRIC_NAMES = [
  ...countMetricNames,
  ...durationMetricNames,
  ...consumerMetricNames,
  API_THROTTLED_METRIC,
  API_UNAUTHORIZED_METRIC,
] as const;
type ServiceMetricName = (typeof SERVICE_METRIC_NAMES)[number];

/** Schedules firing this late after their slot (p99 over 5 minutes) raise an alarm: the fire workers are not keeping up. */
export const FIRE_LATENESS_P99_THRESHOLD_MS = 60_000;

/**
 * The error budget's burn-rate rules, from the Google SRE workbook (Alerting on SLOs, multiwindow,
 * multi-burn-rate alerts: https://sre.google/workbook/alerting-on-slos/). A rule fires when the API's
 * 5xx share over both its windows is above `burnRate` times the error budget (100 − the availability
 * objective, percent): burning at 14.4 times spends 2% of a 30-day budget in an hour, at 6 times 5% in
 * 6 hours, at 1 time 10% in 3 days. The long window says enough budget went to matter; the short one
 * that it is still going, so the alarm ends soon after the errors do. Handlers answer their own
 * failures with a 500, so Lambda's Errors never sees them: these alarms read what callers got.
 */
export const BURN_RATE_RULES = [
  { name: 'Fast', severity: 'page', burnRate: 14.4, longWindow: Duration.hours(1), shortWindow: Duration.minutes(5) },
  { name: 'Slow', severity: 'page', burnRate: 6, longWindow: Duration.hours(6), shortWindow: Duration.minutes(30) },
  { name: 'Steady', severity: 'ticket', burnRate: 1, longWindow: Duration.days(3), shortWindow: Duration.hours(6) },
] as const satisfies readonly {
  name: string;
  severity: AlarmSeverity;
  burnRate: number;
  longWindow: Duration;
  shortWindow: Duration;
}[];
/**
 * 5xx answers a rule's long window needs besides its share: a quiet API (a few requests an hour at
 * night) must not page for one failed request, and one failing every request still does.
 */
export const BURN_RATE_MINIMUM_ERRORS = 5;

/** A burn-rate window's threshold: the 5xx share (percent) that spends the budget `burnRate` times as fast as it lasts. */
export const burnRateThreshold = (burnRate: number, availabilityObjective: number) =>
  // Rounded: 100 − 99.9 is 0.09999999999999432 in binary floating point.
  Number((burnRate * (100 - availabilityObjective)).toPrecision(12));

/**
 * The latency objective: 99% of the API's answers within this. It pages when the p99 (all routes) of 3
 * minutes out of 5 is above it, leaving out minutes with too few requests for a p99.
 */
export const API_LATENCY_P99_THRESHOLD_MS = 3000;

/**
 * 401 answers: a ticket when more than this share of the API's answers in 5 minutes were 401, and at
 * least API_UNAUTHORIZED_MINIMUM of them (the edge probe makes one a minute on purpose).
 */
export const API_UNAUTHORIZED_PERCENT_THRESHOLD = 10;
export const API_UNAUTHORIZED_MINIMUM = 100;

/**
 * Lambda errors: a ticket when a function fails more than this share of its invocations over 15 minutes,
 * and at least LAMBDA_ERRORS_MINIMUM times (a minimum of errors rather than of invocations, so a function
 * invoked once a minute that fails every time, the schedule dispatcher, still shows).
 */
export const LAMBDA_ERROR_PERCENT_THRESHOLD = 1;
export const LAMBDA_ERRORS_MINIMUM = 5;
export const LAMBDA_ERRORS_PERIOD = Duration.minutes(15);

/**
 * Administration calls on the table's key that page: it deleted (scheduled), disabled, or its policy
 * replaced (who may use or manage it). A deploy that changes the key's policy makes one too.
 */
export const KEY_ADMINISTRATION_EVENTS = ['ScheduleKeyDeletion', 'DisableKey', 'PutKeyPolicy'] as const;
/**
 * Administration calls on the keyrings' secrets that page: deleted, its value or key changed other than
 * by a rotation's PutSecretValue, its versions' labels moved, its resource policy replaced or removed, a
 * rotation started, a copy made in another region.
 */
export const SECRET_ADMINISTRATION_EVENTS = [
  'DeleteSecret',
  'UpdateSecret',
  'UpdateSecretVersionStage',
  'PutResourcePolicy',
  'DeleteResourcePolicy',
  'RotateSecret',
  'ReplicateSecretToRegions',
] as const;
/**
 * Writes to the keyrings that ticket: `npm run admin -- keys rotate` and `token-keys rotate`, and the
 * first signing key at deploy, write with PutSecretValue; an attacker's write looks the same, so every
 * one is heard, in working hours, with its caller (`userIdentity`) in the notification. RestoreSecret
 * undoes a deletion, which paged.
 */
export const SECRET_WRITE_EVENTS = ['PutSecretValue', 'RestoreSecret'] as const;
/** The detail-type of the events CloudTrail sends EventBridge for API calls. */
export const CLOUDTRAIL_API_CALL = 'AWS API Call via CloudTrail';
/** API throttling: more than this share of the answers were 429 in 5 minutes, and at least API_THROTTLED_MINIMUM of them. */
export const API_THROTTLED_PERCENT_THRESHOLD = 1;
export const API_THROTTLED_MINIMUM = 20;

/**
 * The operations the functions send to DynamoDB (functions/core/store): SystemErrors,
 * ThrottledRequests and latency have an Operation dimension and no total without it. Scan is the
 * stored data migration's alone, at deploy (functions/core/store/migrations.ts): watched as the others,
 * since a throttled or failing Scan holds the release up.
 */
export const DYNAMODB_OPERATIONS = [
  'GetItem',
  'BatchGetItem',
  'Query',
  'Scan',
  'PutItem',
  'UpdateItem',
  'DeleteItem',
  'BatchWriteItem',
  'TransactWriteItems',
] as const;

/**
 * Oldest message a queue may hold (seconds) before its alarm. Fire: a fire message is taken within
 * seconds, and a fire an hour late is lost. Reload: 10 minutes, longer than a burst of 100,000
 * schedules' loads takes at the default reloadConcurrency. Webhook: retries hide messages for
 * their delay on purpose (5 s, 5 minutes, 30 minutes…); SQS leaves a message received three
 * times out of the metric, so a healthy queue's oldest is under about 35 minutes. Rollout: each
 * running rollout's message comes back after every step (at most a minute) and after each pause
 * between waves (at most an hour), so it is received over and over and soon left out of the metric;
 * until its third receive it counts, so three hours covers two pauses and the work between them.
 */
export const OLDEST_MESSAGE_AGE_THRESHOLD_SECONDS: Record<QueueName, number> = {
  fire: 300,
  reload: 600,
  webhook: 3600,
  rollout: 10_800,
};

/** Account concurrency: the alarm fires when executions reach this share of the account's quota for 3 minutes. */
export const ACCOUNT_CONCURRENCY_ALARM_SHARE = 0.8;

/** A queue consumer that fails more than this share of its messages (put-backs aside) in each of 3 minutes alarms. */
export const CONSUMER_FAILURE_PERCENT_THRESHOLD = 50;

/** CloudWatch accepts at most 10 metrics in one alarm's math expression. */
export const METRICS_PER_ALARM = 10;

/** The timed function whose stopping pages: without it no schedule fires. */
const SCHEDULE_DISPATCHER = consumerIdOf('schedule-dispatcher');

/** Adds the topic of the severity to an alarm's actions (on alarm and on OK) and lists it on the dashboard. */
type Notify = <A extends Alarm | CompositeAlarm>(alarm: A, severity: AlarmSeverity) => A;

const FIVE_MINUTES = Duration.minutes(5);
/** Where every alarm's description sends the reader. */
export const RUNBOOK = 'Runbook: docs/operations.md, section Alarms.';

/**
 * The service's alarms (besides the DLQ alarms, made with their queues), the EventBridge rules on
 * administration calls to its keys, and its dashboard.
 *
 * Each alarm notifies the topic of its severity (lib/alarm-topic.ts). What users feel pages: the API's
 * error budget burning (BURN_RATE_RULES), its latency, the schedule dispatcher not running and schedule
 * slots missed (the edge's probe pages from the edge's stack); so does a call that could take the table's
 * key or the keyrings away. Everything else is a cause, or a symptom that can wait, and tickets.
 *
 * Lambda errors and throttles are watched across all the service's functions. CloudWatch offers no
 * exact single metric for that: the metrics without a FunctionName dimension count every function
 * of the account and region (other stacks and stages too), Metrics Insights cannot select a list of
 * function names (its WHERE knows only =, != and AND) and an alarm's math expression takes at most
 * 10 metrics. So the functions are split into groups; each group is an alarm with no action of its
 * own, and one composite alarm per kind, in ALARM when any group is, is what notifies. A throttles
 * group sums its 10 members' throttles (one is enough to alarm, so "any group has one" is "the service
 * has one"); an errors group reads the errors and invocations of 5 members and takes the highest error
 * share among them, so the composite is in ALARM when any function fails more than its share. It costs
 * a group alarm per 5 functions and one per 10, plus 2; alarms per function would take the stack past
 * CloudFormation's 500 resources.
 */
export class ServiceMonitoring extends Construct {
  readonly alarms: IAlarm[] = [];
  /**
   * The paging alarms that read none of the functions' metrics (the error budget burning, the API's
   * latency, schedule slots missed): what a release must not cause, and so what rolls one back
   * (lib/function-stacks.ts). The ones on a function (the dispatcher not running) are left out: the
   * functions' nested stacks would then wait on an alarm that waits on them.
   */
  readonly symptomAlarms: IAlarm[] = [];
  readonly dashboardName: string;
  private readonly dimensions: Record<string, string>;

  constructor(scope: Construct, id: string, props: ServiceMonitoringProps) {
    super(scope, id);
    this.dimensions = serviceMetricsDimensions(props.stage);
    // Dashboards are global to the account: the region keeps two regions' stacks apart.
    this.dashboardName = `${Stack.of(this).stackName}-${Aws.REGION}`;
    const { alarmTopics } = props;
    const notify: Notify = (alarm, severity) => {
      this.alarms.push(notifying(alarm, alarmTopics.action(severity)));
      return alarm;
    };

    this.watchErrorBudget(props, notify);

    // Lambda errors (a share of each function's invocations) and throttles, across every function (see the class comment).
    const errorGroups = chunk(props.functions, METRICS_PER_ALARM / 2).map((members, index, groups) => {
      const shares = Object.fromEntries(
        members.map((member, position) => {
          const options = { period: LAMBDA_ERRORS_PERIOD, statistic: 'Sum' };
          const [errors, invocations] = [`e${position}`, `i${position}`];
          return [
            `r${position}`,
            new MathExpression({
              expression: `IF(FILL(${errors}, 0) >= ${LAMBDA_ERRORS_MINIMUM}, 100 * FILL(${errors}, 0) / ${invocations}, 0)`,
              usingMetrics: { [errors]: member.fn.metricErrors(options), [invocations]: member.fn.metricInvocations(options) },
              period: LAMBDA_ERRORS_PERIOD,
              label: `${member.name} errors (% of invocations)`,
            }),
          ];
        }),
      );
      return new Alarm(this, `LambdaErrorsGroup${index + 1}`, {
        alarmDescription:
          `Part ${index + 1} of ${groups.length} of the LambdaErrors alarm, which notifies: the highest error share (% of ` +
          `invocations, 15 minutes) of ${members.map((member) => member.name).join(', ')}.`,
        metric: new MathExpression({
          expression: `MAX([${Object.keys(shares).join(', ')}])`,
          usingMetrics: shares,
          period: LAMBDA_ERRORS_PERIOD,
          label: `Lambda errors (% of invocations), group ${index + 1}`,
        }),
        threshold: LAMBDA_ERROR_PERCENT_THRESHOLD,
        comparisonOperator: ComparisonOperator.GREATER_THAN_THRESHOLD,
        evaluationPeriods: 1,
        treatMissingData: TreatMissingData.NOT_BREACHING,
      });
    });
    notify(
      new CompositeAlarm(this, 'LambdaErrorsAlarm', {
        alarmDescription:
          `A function of the service failed more than ${LAMBDA_ERROR_PERCENT_THRESHOLD}% of its invocations over 15 minutes, at least ` +
          `${LAMBDA_ERRORS_MINIMUM} times: an unhandled error, a time-out, running out of memory or failing to start (HTTP ` +
          'handlers answer their own errors with a 500, so this is a crash). The group in ALARM names five functions; the ' +
          "dashboard's Lambda errors graph names the one, its log group has the error. Queue messages of a failed batch are " +
          `retried and end in the DLQ if they keep failing. ${RUNBOOK}`,
        alarmRule: AlarmRule.anyOf(...errorGroups),
      }),
      'ticket',
    );
    const throttleGroups = chunk(props.functions, METRICS_PER_ALARM).map((members, index, groups) => {
      const metrics = Object.fromEntries(
        members.map((member, position) => [
          `f${position}`,
          metricOf(member, 'Throttles', { period: FIVE_MINUTES, statistic: 'Sum' }),
        ]),
      );
      return new Alarm(this, `LambdaThrottlesGroup${index + 1}`, {
        alarmDescription:
          `Part ${index + 1} of ${groups.length} of the LambdaThrottles alarm, which notifies: throttles of ` +
          `${members.map((member) => member.name).join(', ')}.`,
        metric: new MathExpression({
          expression: sumOf(metrics),
          usingMetrics: metrics,
          period: FIVE_MINUTES,
          label: `Lambda throttles, group ${index + 1}`,
        }),
        threshold: 1,
        comparisonOperator: ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
        evaluationPeriods: 1,
        treatMissingData: TreatMissingData.NOT_BREACHING,
      });
    });
    notify(
      new CompositeAlarm(this, 'LambdaThrottlesAlarm', {
        alarmDescription:
          'Lambda refused to run a function of the service at least once in 5 minutes: the concurrency of the account ' +
          'and region is used up (shared with every other function there). API callers got errors; queue messages ' +
          'and timer ticks are retried. Look for the function whose invocations spiked (dashboard) or another ' +
          `workload of the account, and ask for a higher concurrency quota if the load is real. ${RUNBOOK}`,
        alarmRule: AlarmRule.anyOf(...throttleGroups),
      }),
      'ticket',
    );

    // Schedules firing late: a burst larger than the fire workers absorb in a minute, or their failures.
    notify(
      new Alarm(this, 'ScheduleFireLatenessAlarm', {
        alarmDescription:
          `The 99th percentile of schedule fire lateness (fire time minus slot) was over ${FIRE_LATENESS_P99_THRESHOLD_MS / 1000} s ` +
          "in 5 minutes: schedules are firing late. Look at the fire queue depth and the fire worker's errors, throttles " +
          'and duration on the dashboard; if the queue drains slowly without errors, raise fireConcurrency (and dueShards ' +
          `if DynamoDB throttles the index): docs/schedules.md, section At scale. ${RUNBOOK}`,
        metric: this.serviceMetric('ScheduleFireLateness', 'p99'),
        threshold: FIRE_LATENESS_P99_THRESHOLD_MS,
        comparisonOperator: ComparisonOperator.GREATER_THAN_THRESHOLD,
        evaluationPeriods: 1,
        treatMissingData: TreatMissingData.NOT_BREACHING,
      }),
      'ticket',
    );

    // Slots that did not fire: their fires failed, or waited, for an hour (the lateness alarm has no data then).
    const scheduleMisses = notify(
      new Alarm(this, 'ScheduleMissesAlarm', {
        alarmDescription:
          'At least one schedule slot was not fired in 5 minutes because it was an hour or more late by the time a fire ' +
          'worker got to it: the dispatcher did not run, the fire workers fell an hour behind, or firing kept failing ' +
          "(the ScheduleFireFailures metric and the fire worker's log say why; each failure is retried until the hour " +
          `is up). The schedules moved on to their next slot. docs/schedules.md, section At scale. ${RUNBOOK}`,
        metric: this.serviceMetric('ScheduleMisses'),
        threshold: 0,
        comparisonOperator: ComparisonOperator.GREATER_THAN_THRESHOLD,
        evaluationPeriods: 1,
        treatMissingData: TreatMissingData.NOT_BREACHING,
      }),
      'page',
    );
    this.symptomAlarms.push(scheduleMisses);

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
        metric: this.serviceMetric('WebhookEndpointsOpened'),
        threshold: 0,
        comparisonOperator: ComparisonOperator.GREATER_THAN_THRESHOLD,
        evaluationPeriods: 3,
        datapointsToAlarm: 1,
        treatMissingData: TreatMissingData.NOT_BREACHING,
      }),
      'ticket',
    );

    // Work requests left behind that the sweeper cannot finish: it retries every minute, so this is a stuck one.
    notify(
      new Alarm(this, 'FollowUpFailuresAlarm', {
        alarmDescription:
          'The follow-up sweeper failed to finish work that requests left behind (a pending template to apply, a ' +
          'delivery to queue, a deletion to sweep) in each of 3 runs of 5 minutes: it retries every minute, so one is ' +
          `stuck. Its log ("A follow-up could not be finished") names the follow-up and the error. ${RUNBOOK}`,
        metric: this.serviceMetric('FollowUpFailures'),
        threshold: 0,
        comparisonOperator: ComparisonOperator.GREATER_THAN_THRESHOLD,
        evaluationPeriods: 3,
        datapointsToAlarm: 3,
        treatMissingData: TreatMissingData.NOT_BREACHING,
      }),
      'ticket',
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
        timed.name === SCHEDULE_DISPATCHER ? 'page' : 'ticket',
      );
    }

    this.watchApi(props, notify);
    this.watchTable(props.table, notify);
    this.watchQueues(props, notify);
    this.watchConcurrency(props, notify);
    this.watchKeyAdministration(props);

    this.createDashboard(props);
  }

  /** One of the service's own metrics, over 5 minutes unless told; graphs name their lines, alarms need no label. */
  private serviceMetric(
    metricName: ServiceMetricName,
    statistic = 'Sum',
    label?: string,
    options: { period?: Duration; dimensions?: Record<string, string> } = {},
  ) {
    return new Metric({
      namespace: SERVICE_METRICS_NAMESPACE,
      metricName,
      dimensionsMap: { ...this.dimensions, ...options.dimensions },
      statistic,
      period: options.period ?? FIVE_MINUTES,
      label,
    });
  }

  /** A consumer's messages received or failed, from the worker wrapper's EMF, under its function's name. */
  private consumerMetric(member: NamedFunction, metricName: (typeof consumerMetricNames)[number], period: Duration) {
    return this.serviceMetric(
      metricName,
      'Sum',
      `${member.name} ${metricName === 'ConsumerMessagesFailed' ? 'failed' : 'received'}`,
      {
        period,
        dimensions: { [consumerMetricDimension]: member.fn.functionName },
      },
    );
  }

  /**
   * The API's error budget (BURN_RATE_RULES): per rule, an alarm on the 5xx share over each window, with no
   * action of its own, and composite alarms that notify: the page rules' (long AND short window of either),
   * and the ticket rule's. The metrics without a Stage dimension cover the API's only stage, $default.
   *
   * An alarm whose period is a window is a sliding window: CloudWatch evaluates an alarm of a period of a
   * minute or more every minute, over the last Period × EvaluationPeriods
   * (https://docs.aws.amazon.com/AmazonCloudWatch/latest/monitoring/AlarmThatSendsEmail.html,
   * https://docs.aws.amazon.com/AmazonCloudWatch/latest/monitoring/alarm-evaluation-window.html); a period
   * of an hour or more may be up to 7 days
   * (https://docs.aws.amazon.com/AmazonCloudWatch/latest/APIReference/API_PutMetricAlarm.html).
   */
  private watchErrorBudget(props: ServiceMonitoringProps, notify: Notify): void {
    const { api, availabilityObjective } = props;
    const errorBudget = Number((100 - availabilityObjective).toPrecision(12));
    const window = (rule: (typeof BURN_RATE_RULES)[number], kind: 'Long' | 'Short') => {
      const period = kind === 'Long' ? rule.longWindow : rule.shortWindow;
      const requests = api.metricCount({ period, statistic: 'Sum' });
      const serverErrors = api.metricServerError({ period, statistic: 'Sum' });
      const threshold = burnRateThreshold(rule.burnRate, availabilityObjective);
      return new Alarm(this, `ApiErrorBudget${rule.name}${kind}Window`, {
        alarmDescription:
          `Part of ApiErrorBudget${rule.severity === 'page' ? 'Burn' : 'SteadyBurn'}Alarm, which notifies: more than ${threshold}% ` +
          `of the API's answers over the last ${period.toHumanString()} were 5xx, ${rule.burnRate} times the error budget ` +
          `(${errorBudget}%, for an availability objective of ${availabilityObjective}%).`,
        metric: new MathExpression({
          // The long window needs enough errors to matter; the short one only says whether it is still going, and a
          // window without requests (no data) leaves its state as it was: an idle night neither starts nor ends a page.
          expression:
            kind === 'Long'
              ? `IF(FILL(serverErrors, 0) >= ${BURN_RATE_MINIMUM_ERRORS}, 100 * FILL(serverErrors, 0) / requests, 0)`
              : '100 * FILL(serverErrors, 0) / requests',
          usingMetrics: { requests, serverErrors },
          period,
          label: `API 5xx (% of requests, ${period.toHumanString()})`,
        }),
        threshold,
        comparisonOperator: ComparisonOperator.GREATER_THAN_THRESHOLD,
        evaluationPeriods: 1,
        treatMissingData: kind === 'Long' ? TreatMissingData.NOT_BREACHING : TreatMissingData.IGNORE,
      });
    };
    const rulesOf = (severity: AlarmSeverity) =>
      BURN_RATE_RULES.filter((rule) => rule.severity === severity).map((rule) =>
        AlarmRule.allOf(window(rule, 'Long'), window(rule, 'Short')),
      );
    const windows = (severity: AlarmSeverity) =>
      BURN_RATE_RULES.filter((rule) => rule.severity === severity)
        .map((rule) => `${rule.burnRate} times over ${rule.longWindow.toHumanString()} and ${rule.shortWindow.toHumanString()}`)
        .join(', or ');
    const burn = notify(
      new CompositeAlarm(this, 'ApiErrorBudgetBurnAlarm', {
        alarmDescription:
          `The API is spending its error budget (${errorBudget}% of requests may fail, for an availability objective of ` +
          `${availabilityObjective}%) fast: its 5xx share is over ${windows('page')} the budget. Callers are failing now. ` +
          'Find the route in the access log (status >= 500, by routeKey) and the dashboard (Lambda errors, throttles, ' +
          `duration), then the error in that function's log by requestId; right after a deploy, roll back. ${RUNBOOK}`,
        alarmRule: AlarmRule.anyOf(...rulesOf('page')),
      }),
      'page',
    );
    notify(
      new CompositeAlarm(this, 'ApiErrorBudgetSteadyBurnAlarm', {
        alarmDescription:
          `The API's 5xx share is over ${windows('ticket')} its error budget (${errorBudget}%, for an availability objective ` +
          `of ${availabilityObjective}%): kept up, the budget of 30 days is spent. Not an outage: a route or a caller that ` +
          `fails a steady few. The access log (status >= 500, by routeKey) over the last days names it. ${RUNBOOK}`,
        alarmRule: AlarmRule.anyOf(...rulesOf('ticket')),
      }),
      'ticket',
    );
    this.symptomAlarms.push(burn);
  }

  /** API p99 latency, 401s and 429s. */
  private watchApi(props: ServiceMonitoringProps, notify: Notify): void {
    const { api } = props;
    const latency = notify(
      new Alarm(this, 'ApiLatencyAlarm', {
        alarmDescription:
          `The API's p99 latency (all routes) was over ${API_LATENCY_P99_THRESHOLD_MS / 1000} s in 3 of the last 5 minutes: ` +
          'callers wait, and some may time out. Find the slow route in the access log (latency, integrationLatency, ' +
          "by routeKey) and its function's duration and throttles on the dashboard; then DynamoDB latency and throttles; " +
          `right after a deploy, roll back. Minutes with too few requests for a p99 are left out. ${RUNBOOK}`,
        metric: api.metricLatency({ period: Duration.minutes(1), statistic: 'p99' }),
        threshold: API_LATENCY_P99_THRESHOLD_MS,
        comparisonOperator: ComparisonOperator.GREATER_THAN_THRESHOLD,
        evaluationPeriods: 5,
        datapointsToAlarm: 3,
        evaluateLowSampleCountPercentile: 'ignore',
        treatMissingData: TreatMissingData.NOT_BREACHING,
      }),
      'page',
    );
    this.symptomAlarms.push(latency);

    // HTTP APIs publish 4xx but no count of 429s or 401s alone: metric filters count the access log's lines of
    // each, under the dimensions of the service's own metrics, which are fields of each line (lib/service-api.ts,
    // accessLogFormat).
    const countStatus = (id: string, status: string, metricName: ServiceMetricName) =>
      new MetricFilter(this, id, {
        logGroup: props.accessLogs,
        filterPattern: FilterPattern.stringValue('$.status', '=', status),
        metricNamespace: SERVICE_METRICS_NAMESPACE,
        metricName,
        metricValue: '1',
        unit: Unit.COUNT,
        dimensions: Object.fromEntries(Object.keys(this.dimensions).map((name) => [name, `$.${name}`])),
      });
    countStatus('ApiThrottledFilter', '429', API_THROTTLED_METRIC);
    countStatus('ApiUnauthorizedFilter', '401', API_UNAUTHORIZED_METRIC);
    const requests = api.metricCount({ period: FIVE_MINUTES, statistic: 'Sum' });

    // Both on the share of the API's answers with one status, counted from the access log (metric filters).
    const answerShareAlarm = (
      id: string,
      share: { metric: IMetric; status: string; minimum: number; percent: number; description: string },
    ) =>
      notify(
        new Alarm(this, id, {
          alarmDescription: `${share.description} ${RUNBOOK}`,
          metric: new MathExpression({
            expression: `IF(FILL(answers, 0) >= ${share.minimum}, 100 * FILL(answers, 0) / requests, 0)`,
            usingMetrics: { requests, answers: share.metric },
            period: FIVE_MINUTES,
            label: `API ${share.status} (% of requests)`,
          }),
          threshold: share.percent,
          comparisonOperator: ComparisonOperator.GREATER_THAN_THRESHOLD,
          evaluationPeriods: 1,
          treatMissingData: TreatMissingData.NOT_BREACHING,
        }),
        'ticket',
      );
    // A ticket, not a page: behind the edge, made-up and forged tokens are refused before the API, so what is left
    // is one integrator's revoked or expired token in a loop, a caller going around the edge, or guesses at the
    // login: none lets anyone in, and the WAF's limits bound them. docs/operations.md, Alarms, says more.
    answerShareAlarm('ApiUnauthorizedAlarm', {
      metric: this.serviceMetric(API_UNAUTHORIZED_METRIC),
      status: '401',
      minimum: API_UNAUTHORIZED_MINIMUM,
      percent: API_UNAUTHORIZED_PERCENT_THRESHOLD,
      description:
        `More than ${API_UNAUTHORIZED_PERCENT_THRESHOLD}% of the API's answers were 401 in 5 minutes (at least ` +
        `${API_UNAUTHORIZED_MINIMUM}): callers with tokens that are unknown, revoked or expired, or failed logins. The ` +
        'access log (status 401, by routeKey and ip) says whether it is one caller (tell its integrator) or many (a ' +
        "guessing run the WAF's limits hold; or, right after a key rotation or a deploy, valid tokens refused: roll back).",
    });
    answerShareAlarm('ApiThrottledAlarm', {
      metric: this.serviceMetric(API_THROTTLED_METRIC),
      status: '429',
      minimum: API_THROTTLED_MINIMUM,
      percent: API_THROTTLED_PERCENT_THRESHOLD,
      description:
        `More than ${API_THROTTLED_PERCENT_THRESHOLD}% of the API's answers were 429 Too Many Requests in 5 minutes (at least ` +
        `${API_THROTTLED_MINIMUM}): the stage's or a route's throttling refused callers. The access log (status 429, by ` +
        'routeKey and ip) says whether it is a flood on a route without a token (its own bucket: nothing else suffers) or ' +
        'callers with tokens meeting apiRateLimit (raise it if the traffic is legitimate).',
    });
  }

  /** DynamoDB throttling (table and indexes) and system errors, sustained over 2 of 3 periods of 5 minutes. */
  private watchTable(table: ITable, notify: Notify): void {
    const throttleEvents = Object.fromEntries(
      tableThrottleMetrics(table, { period: FIVE_MINUTES, statistic: 'Sum' }).map((metric, index) => [`t${index}`, metric]),
    );
    notify(
      new Alarm(this, 'TableThrottlesAlarm', {
        alarmDescription:
          'DynamoDB throttled reads or writes of the table or of an index in 2 of the last 3 periods of 5 minutes. The SDK ' +
          'retries them, so callers see latency first, then errors. The dashboard shows which (table or index, read or ' +
          'write, which operation): a burst of schedule fires on too few due-index shards, a new table not yet warm for ' +
          `the load, or one hot partition. ${RUNBOOK}`,
        metric: new MathExpression({
          expression: sumOf(throttleEvents),
          usingMetrics: throttleEvents,
          period: FIVE_MINUTES,
          label: 'DynamoDB throttle events',
        }),
        threshold: 1,
        comparisonOperator: ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
        evaluationPeriods: 3,
        datapointsToAlarm: 2,
        treatMissingData: TreatMissingData.NOT_BREACHING,
      }),
      'ticket',
    );
    const systemErrors = Object.fromEntries(
      operationMetrics(table, 'SystemErrors', { period: FIVE_MINUTES, statistic: 'Sum' }).map((metric, index) => [
        `e${index}`,
        metric,
      ]),
    );
    notify(
      new Alarm(this, 'TableSystemErrorsAlarm', {
        alarmDescription:
          'DynamoDB answered requests of the service with an internal error (HTTP 500) in 2 of the last 3 periods of 5 ' +
          "minutes. The SDK retries them; what still fails reaches the functions' errors. It is on AWS's side: check the " +
          `AWS Health Dashboard for DynamoDB in the region, and the API 5xx and Lambda errors alarms. ${RUNBOOK}`,
        metric: new MathExpression({
          expression: sumOf(systemErrors),
          usingMetrics: systemErrors,
          period: FIVE_MINUTES,
          label: 'DynamoDB system errors',
        }),
        threshold: 1,
        comparisonOperator: ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
        evaluationPeriods: 3,
        datapointsToAlarm: 2,
        treatMissingData: TreatMissingData.NOT_BREACHING,
      }),
      'ticket',
    );
  }

  /** Every queue's oldest message, and every consumer's share of failed messages. */
  private watchQueues(props: ServiceMonitoringProps, notify: Notify): void {
    for (const { name, queue } of props.queues) {
      const threshold = OLDEST_MESSAGE_AGE_THRESHOLD_SECONDS[name];
      notify(
        new Alarm(this, `${pascalCase(name)}OldestMessageAlarm`, {
          alarmDescription:
            `The oldest message of the ${name} queue has waited more than ${threshold / 60} minutes: its consumer is not ` +
            'keeping up (capped by its concurrency setting, throttled, or failing) or not running. Look at the queue depth ' +
            `and its consumer's invocations, errors and throttles on the dashboard. ${RUNBOOK}`,
          metric: queue.metricApproximateAgeOfOldestMessage({ period: FIVE_MINUTES, statistic: 'Maximum' }),
          threshold,
          comparisonOperator: ComparisonOperator.GREATER_THAN_THRESHOLD,
          evaluationPeriods: 1,
          treatMissingData: TreatMissingData.NOT_BREACHING,
        }),
        'ticket',
      );
    }
    // A consumer failing every message reports partial failures, not errors: this, not the Lambda errors alarm, sees it.
    for (const member of props.queueConsumers) {
      const received = this.consumerMetric(member, 'ConsumerMessagesReceived', Duration.minutes(1));
      const failed = this.consumerMetric(member, 'ConsumerMessagesFailed', Duration.minutes(1));
      notify(
        new Alarm(this, `${pascalCase(member.name)}FailureRatioAlarm`, {
          alarmDescription:
            `${member.name} failed more than ${CONSUMER_FAILURE_PERCENT_THRESHOLD}% of the messages it received in each of ` +
            "3 minutes in a row (messages put back on purpose, a webhook's retry delay, are not failures). They come back " +
            "after the visibility timeout and end in the DLQ. Its log group has the errors, by messageId. The function's " +
            `errors alarm stays quiet, since a failed message is reported, not thrown. ${RUNBOOK}`,
          metric: new MathExpression({
            expression: 'IF(FILL(received, 0) > 0, 100 * FILL(failed, 0) / received, 0)',
            usingMetrics: { received, failed },
            period: Duration.minutes(1),
            label: `${member.name} failed (% of received)`,
          }),
          threshold: CONSUMER_FAILURE_PERCENT_THRESHOLD,
          comparisonOperator: ComparisonOperator.GREATER_THAN_THRESHOLD,
          evaluationPeriods: 3,
          datapointsToAlarm: 3,
          treatMissingData: TreatMissingData.NOT_BREACHING,
        }),
        'ticket',
      );
    }
  }

  /**
   * EventBridge rules on the CloudTrail events of administration calls to the table's key and the keyrings,
   * matched on the resources' ARNs (a KMS event names its key in `resources`, whatever the caller called it;
   * a Secrets Manager event its secret in `responseElements.arn`:
   * https://docs.aws.amazon.com/kms/latest/developerguide/ct-put-key-policy.html,
   * https://docs.aws.amazon.com/secretsmanager/latest/userguide/monitoring-eventbridge.html). CloudTrail sends
   * EventBridge these events only where a trail logs management events
   * (https://docs.aws.amazon.com/eventbridge/latest/userguide/eb-service-event-cloudtrail.html).
   */
  private watchKeyAdministration(props: ServiceMonitoringProps): void {
    const { alarmTopics } = props;
    const keyringArns = props.keyrings.map((secret) => secret.secretArn);
    new Rule(this, 'TableKeyAdministrationRule', {
      description: `Pages on ${KEY_ADMINISTRATION_EVENTS.join(', ')} of the table's KMS key (docs/operations.md, Alarms)`,
      eventPattern: {
        source: ['aws.kms'],
        detailType: [CLOUDTRAIL_API_CALL],
        detail: {
          eventSource: ['kms.amazonaws.com'],
          eventName: [...KEY_ADMINISTRATION_EVENTS],
          resources: { ARN: [props.tableKey.keyArn] },
        },
      },
      targets: [alarmTopics.page.ruleTarget()],
    });
    const secretCalls = (id: string, severity: AlarmSeverity, eventNames: readonly string[]) =>
      new Rule(this, id, {
        description: `${severity === 'page' ? 'Pages' : 'Tickets'} on ${eventNames.join(', ')} of the keyrings (docs/operations.md, Alarms)`,
        eventPattern: {
          source: ['aws.secretsmanager'],
          detailType: [CLOUDTRAIL_API_CALL],
          detail: {
            eventSource: ['secretsmanager.amazonaws.com'],
            eventName: [...eventNames],
            responseElements: { arn: keyringArns },
          },
        },
        targets: [alarmTopics[severity].ruleTarget()],
      });
    secretCalls('KeyringAdministrationRule', 'page', SECRET_ADMINISTRATION_EVENTS);
    secretCalls('KeyringWriteRule', 'ticket', SECRET_WRITE_EVENTS);
  }

  /**
   * The account's concurrent executions in the region: the one alarm on something the stack shares
   * (every function of the account, every stage deployed there), since Lambda throttles every
   * function alike once the quota is used up.
   */
  private watchConcurrency(props: ServiceMonitoringProps, notify: Notify): void {
    const threshold = accountConcurrencyThreshold(props.accountConcurrencyLimit);
    notify(
      new Alarm(this, 'AccountConcurrencyAlarm', {
        alarmDescription:
          `The account's Lambda concurrent executions in the region reached ${threshold} (${ACCOUNT_CONCURRENCY_ALARM_SHARE * 100}% ` +
          `of accountConcurrencyLimit, ${props.accountConcurrencyLimit}) for 3 minutes: at the quota Lambda throttles every ` +
          'function of the account, API routes included. Find what runs (the dashboard, or ConcurrentExecutions by ' +
          'function in CloudWatch), and ask for a higher quota if the load is real. ' +
          RUNBOOK,
        metric: accountConcurrency({ period: Duration.minutes(1), statistic: 'Maximum' }),
        threshold,
        comparisonOperator: ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
        evaluationPeriods: 3,
        datapointsToAlarm: 3,
        treatMissingData: TreatMissingData.NOT_BREACHING,
      }),
      'ticket',
    );
  }

  private createDashboard(props: ServiceMonitoringProps): void {
    const { api } = props;
    const graph = (
      title: string,
      left: IMetric[],
      options: { period?: Duration; width?: number; leftAnnotations?: HorizontalAnnotation[] } = {},
    ) =>
      new GraphWidget({
        title,
        left,
        width: options.width ?? 8,
        height: 6,
        period: options.period ?? FIVE_MINUTES,
        leftAnnotations: options.leftAnnotations,
      });
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
    const minute = Duration.minutes(1);
    dashboard.addWidgets(
      graph('API 401 and 429 answers, from the access log', [
        this.serviceMetric(API_UNAUTHORIZED_METRIC, 'Sum', '401'),
        this.serviceMetric(API_THROTTLED_METRIC, 'Sum', '429'),
      ]),
      graph(
        'Lambda concurrent executions (whole account and region)',
        [accountConcurrency({ period: minute, statistic: 'Maximum', label: 'ConcurrentExecutions' })],
        {
          period: minute,
          leftAnnotations: [{ value: accountConcurrencyThreshold(props.accountConcurrencyLimit), label: 'alarm' }],
        },
      ),
      graph(
        'Queue consumers: messages received and failed (per minute)',
        props.queueConsumers.flatMap((member) => consumerMetricNames.map((name) => this.consumerMetric(member, name, minute))),
        { period: minute },
      ),
    );
    // The table: what its runbooks (docs/operations.md, Alarms) point to.
    const dynamo = { width: 6 };
    dashboard.addWidgets(
      graph(
        'DynamoDB throttles',
        [
          ...tableThrottleMetrics(props.table, { statistic: 'Sum' }),
          ...operationMetrics(props.table, 'ThrottledRequests', { statistic: 'Sum' }).map((metric) =>
            metric.with({ label: `ThrottledRequests ${metric.label}` }),
          ),
        ],
        dynamo,
      ),
      graph('DynamoDB system errors', operationMetrics(props.table, 'SystemErrors', { statistic: 'Sum' }), dynamo),
      graph(
        'DynamoDB consumed capacity (units)',
        (['ConsumedReadCapacityUnits', 'ConsumedWriteCapacityUnits'] as const).flatMap((metricName) => [
          tableMetric(props.table, metricName, { statistic: 'Sum', label: `table ${metricName}` }),
          ...tableDefinition.globalIndexes.map(({ indexName }) =>
            tableMetric(props.table, metricName, {
              statistic: 'Sum',
              label: `${indexName} ${metricName}`,
              dimensions: { GlobalSecondaryIndexName: indexName },
            }),
          ),
        ]),
        dynamo,
      ),
      graph(
        'DynamoDB latency (ms, average)',
        operationMetrics(props.table, 'SuccessfulRequestLatency', { statistic: 'Average' }),
        dynamo,
      ),
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
        'Queue oldest message age (s)',
        props.queues.map(({ name, queue }) => queue.metricApproximateAgeOfOldestMessage({ statistic: 'Maximum', label: name })),
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
        'Service: requests, 5xx answers and answers cut to fit one Lambda result',
        (['Requests', 'Errors', 'AnswersCut'] as const).map((name) => this.serviceMetric(name, 'Sum', name)),
      ),
      graph(
        'Service: webhook deliveries',
        (
          ['WebhookDeliveries', 'WebhookRetries', 'WebhookFailures', 'WebhookAttemptsDeferred', 'WebhookEndpointsOpened'] as const
        ).map((name) => this.serviceMetric(name, 'Sum', name)),
      ),
    );
    dashboard.addWidgets(
      graph(
        'Service: schedules and reloads',
        (['ScheduleFires', 'ScheduleMisses', 'ScheduleFireFailures', 'ReloadEnqueued', 'ReloadSkippedOffline'] as const).map(
          (name) => this.serviceMetric(name, 'Sum', name),
        ),
      ),
      graph('Schedule fire lateness (ms)', [
        this.serviceMetric('ScheduleFireLateness', 'p50', 'p50'),
        this.serviceMetric('ScheduleFireLateness', 'p99', 'p99'),
      ]),
      graph(
        'Service: follow-ups finished by the sweeper',
        (['FollowUpsFinished', 'FollowUpFailures'] as const).map((name) => this.serviceMetric(name, 'Sum', name)),
      ),
      new AlarmStatusWidget({ title: 'Alarms', alarms: [...this.alarms, ...props.otherAlarms], width: 16, height: 6 }),
    );
  }
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

/** The sum of the metrics of a math expression. FILL: a metric with no data point (a function that did not run) would leave the sum without one. */
function sumOf(metrics: Record<string, IMetric>): string {
  return Object.keys(metrics)
    .map((name) => `FILL(${name}, 0)`)
    .join(' + ');
}

/** A DynamoDB metric of the table, or of one of its indexes. */
function tableMetric(
  table: ITable,
  metricName: string,
  options: { period?: Duration; statistic: string; label?: string; dimensions?: Record<string, string> },
) {
  return new Metric({
    namespace: 'AWS/DynamoDB',
    metricName,
    dimensionsMap: { TableName: table.tableName, ...options.dimensions },
    period: options.period ?? FIVE_MINUTES,
    statistic: options.statistic,
    label: options.label,
  });
}

/** A metric that DynamoDB publishes per operation, for each operation the functions send. */
function operationMetrics(table: ITable, metricName: string, options: { period?: Duration; statistic: string }) {
  return DYNAMODB_OPERATIONS.map((operation) =>
    tableMetric(table, metricName, { ...options, label: operation, dimensions: { Operation: operation } }),
  );
}

/** Throttled reads and writes of the table and of each index (an index short of writes throttles the table's). */
function tableThrottleMetrics(table: ITable, options: { period?: Duration; statistic: string }) {
  const targets = [
    { label: 'table', dimensions: {} },
    ...tableDefinition.globalIndexes.map(({ indexName }) => ({
      label: indexName,
      dimensions: { GlobalSecondaryIndexName: indexName },
    })),
  ];
  return targets.flatMap(({ label, dimensions }) =>
    (['ReadThrottleEvents', 'WriteThrottleEvents'] as const).map((metricName) =>
      tableMetric(table, metricName, { ...options, dimensions, label: `${label} ${metricName}` }),
    ),
  );
}

/** Lambda's concurrent executions of the whole account in the region (the metric without a FunctionName). */
function accountConcurrency(options: { period: Duration; statistic: string; label?: string }) {
  return new Metric({ namespace: 'AWS/Lambda', metricName: 'ConcurrentExecutions', ...options });
}

/** The executions at which the account concurrency alarm fires. */
export const accountConcurrencyThreshold = (accountConcurrencyLimit: number) =>
  Math.floor(accountConcurrencyLimit * ACCOUNT_CONCURRENCY_ALARM_SHARE);

export function chunk<T>(items: readonly T[], size: number): T[][] {
  const chunks: T[][] = [];
  for (let start = 0; start < items.length; start += size) chunks.push(items.slice(start, start + size));
  return chunks;
}
