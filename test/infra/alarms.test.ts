/**
 * Alarms for what breaks (issue 26): API p99 latency and 429s, DynamoDB throttles and system
 * errors, the oldest message of every queue, the account's concurrent executions, and each queue
 * consumer's failure ratio; the service's own metrics, and so their alarms, carry the stage.
 * Paging for symptoms (issue 35): what pages and what tickets, the error budget's burn rates, Lambda
 * errors as a share of invocations, 401s, and the EventBridge rules on the keys' administration.
 * docs/operations.md has a runbook entry for each (operations.test.ts checks every alarm is named there).
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Template } from 'aws-cdk-lib/assertions';
import { beforeAll, describe, expect, it } from 'vitest';
import { stageVariable } from '#functions/core/observability/names.ts';
import { queueDefinitions } from '#functions/core/store/queue-definitions.ts';
import { tableDefinition } from '#functions/core/store/table-definition.ts';
import { queueConsumers } from '#functions/routes.ts';
import { consumerIdOf, pascalCase } from '#lib/construct-ids.ts';
import { AVAILABILITY_OBJECTIVE } from '#lib/deployment-settings.ts';
import {
  ACCOUNT_CONCURRENCY_ALARM_SHARE,
  API_LATENCY_P99_THRESHOLD_MS,
  API_THROTTLED_METRIC,
  API_THROTTLED_MINIMUM,
  API_THROTTLED_PERCENT_THRESHOLD,
  API_UNAUTHORIZED_METRIC,
  API_UNAUTHORIZED_MINIMUM,
  API_UNAUTHORIZED_PERCENT_THRESHOLD,
  BURN_RATE_MINIMUM_ERRORS,
  BURN_RATE_RULES,
  CLOUDTRAIL_API_CALL,
  CONSUMER_FAILURE_PERCENT_THRESHOLD,
  DYNAMODB_OPERATIONS,
  KEY_ADMINISTRATION_EVENTS,
  LAMBDA_ERRORS_MINIMUM,
  LAMBDA_ERROR_PERCENT_THRESHOLD,
  METRICS_PER_ALARM,
  OLDEST_MESSAGE_AGE_THRESHOLD_SECONDS,
  SECRET_ADMINISTRATION_EVENTS,
  SECRET_WRITE_EVENTS,
  SERVICE_METRICS_NAMESPACE,
  type ServiceMonitoring,
  serviceMetricsDimensions,
} from '#lib/monitoring.ts';
import { accessLogFormat } from '#lib/service-api.ts';
import { ServiceStack } from '#lib/service-stack.ts';
import { testApp } from '../support/cdk-app.ts';
import { synthesizeProduction } from '../support/stages.ts';
import { deployTimeFunctionIds, wholeTemplate } from '../support/whole-template.ts';

const STAGE = 'staging';

type Dimension = { Name: string; Value: unknown };
interface MetricStat {
  Metric: { Namespace: string; MetricName: string; Dimensions?: Dimension[] };
  Period: number;
  Stat: string;
}
interface AlarmProperties {
  Namespace?: string;
  MetricName?: string;
  Dimensions?: Dimension[];
  Statistic?: string;
  ExtendedStatistic?: string;
  Period?: number;
  Metrics?: { Id: string; Expression?: string; MetricStat?: MetricStat; ReturnData?: boolean }[];
  Threshold?: number;
  ComparisonOperator?: string;
  EvaluationPeriods?: number;
  DatapointsToAlarm?: number;
  EvaluateLowSampleCountPercentile?: string;
  TreatMissingData?: string;
  AlarmActions?: unknown[];
  OKActions?: unknown[];
}
type Resources<P> = Record<string, { Properties: P }>;

const serviceStack = (context: Record<string, unknown> = {}) =>
  new ServiceStack(testApp(context), 'Test', { stage: STAGE, tenantBaseDomain: 'bi.example.com' });
const synthesize = (context: Record<string, unknown> = {}) => wholeTemplate(serviceStack(context));

const idOf = (template: Template, type: string, constructPath: string) => {
  const ids = Object.keys(template.findResources(type)).filter((id) => new RegExp(`^${constructPath}[0-9A-F]{8}$`).test(id));
  if (ids.length !== 1) throw new Error(`Expected one ${type} ${constructPath}, found ${ids.length}`);
  return ids[0] as string;
};
const alarmOf = (template: Template, name: string) =>
  (
    template.findResources('AWS::CloudWatch::Alarm')[idOf(template, 'AWS::CloudWatch::Alarm', `Monitoring${name}`)] as {
      Properties: AlarmProperties;
    }
  ).Properties;
const statsOf = (alarm: AlarmProperties) =>
  (alarm.Metrics ?? []).flatMap((query) => (query.MetricStat ? [query.MetricStat] : []));
const dimensionsOf = (dimensions: Dimension[] | undefined) =>
  Object.fromEntries((dimensions ?? []).map(({ Name, Value }) => [Name, Value]));
const returned = (alarm: AlarmProperties) => alarm.Metrics?.find((query) => query.ReturnData !== false)?.Expression;

describe('alarms for what breaks', () => {
  let template: Template;
  /** Everything in this block tickets. */
  let topic: { Ref: string };
  beforeAll(() => {
    template = synthesize();
    topic = { Ref: idOf(template, 'AWS::SNS::Topic', 'TicketAlarmsTopic') };
  });

  it('put the stage on every function, and in every alarm on the service’s own metrics', () => {
    // A function custom resources run at deploy emits no metric of the service.
    const deployTime = deployTimeFunctionIds(template);
    const functions = Object.entries(
      template.findResources('AWS::Lambda::Function') as Resources<{ Environment?: { Variables?: Record<string, unknown> } }>,
    ).filter(([id]) => !deployTime.has(id));
    expect(functions.length).toBeGreaterThan(50);
    for (const [id, fn] of functions) expect(fn.Properties.Environment?.Variables?.[stageVariable], id).toBe(STAGE);

    const own = Object.entries(
      template.findResources('AWS::CloudWatch::Alarm') as Record<string, { Properties: AlarmProperties }>,
    ).flatMap(([id, { Properties: alarm }]) => [
      ...(alarm.Namespace === SERVICE_METRICS_NAMESPACE ? [{ id, dimensions: dimensionsOf(alarm.Dimensions) }] : []),
      ...statsOf(alarm)
        .filter((stat) => stat.Metric.Namespace === SERVICE_METRICS_NAMESPACE)
        .map((stat) => ({ id, dimensions: dimensionsOf(stat.Metric.Dimensions) })),
    ]);
    expect(new Set(own.map(({ id }) => id.replace(/[0-9A-F]{8}$/, ''))).size).toBeGreaterThanOrEqual(8);
    for (const { id, dimensions } of own) expect(dimensions, id).toMatchObject({ service: 'bi-tenant-admin', stage: STAGE });
  });

  it(`page on the API's p99 latency above ${API_LATENCY_P99_THRESHOLD_MS} ms in 3 of 5 minutes, ignoring minutes too quiet for a p99`, () => {
    const page = { Ref: idOf(template, 'AWS::SNS::Topic', 'AlarmsTopic') };
    expect(alarmOf(template, 'ApiLatencyAlarm')).toMatchObject({
      Namespace: 'AWS/ApiGateway',
      MetricName: 'Latency',
      Dimensions: [{ Name: 'ApiId', Value: { Ref: idOf(template, 'AWS::ApiGatewayV2::Api', 'Api') } }],
      ExtendedStatistic: 'p99',
      Period: 60,
      Threshold: API_LATENCY_P99_THRESHOLD_MS,
      ComparisonOperator: 'GreaterThanThreshold',
      EvaluationPeriods: 5,
      DatapointsToAlarm: 3,
      EvaluateLowSampleCountPercentile: 'ignore',
      AlarmActions: [page],
      OKActions: [page],
    });
  });

  it('count 429s from the access log (HTTP APIs publish no 429 count) under the service and stage, and fire on their share', () => {
    const logGroupId = idOf(template, 'AWS::Logs::LogGroup', 'ApiAccessLogs');
    template.hasResourceProperties('AWS::Logs::MetricFilter', {
      LogGroupName: { Ref: logGroupId },
      FilterPattern: '{ $.status = "429" }',
      MetricTransformations: [
        {
          MetricNamespace: SERVICE_METRICS_NAMESPACE,
          MetricName: API_THROTTLED_METRIC,
          MetricValue: '1',
          Dimensions: [
            { Key: 'service', Value: '$.service' },
            { Key: 'stage', Value: '$.stage' },
          ],
        },
      ],
    });
    // The dimensions' values are fields of each access log line.
    const stage = Object.values(template.findResources('AWS::ApiGatewayV2::Stage'))[0] as {
      Properties: { AccessLogSettings: { Format: string } };
    };
    expect(JSON.parse(stage.Properties.AccessLogSettings.Format)).toMatchObject({ service: 'bi-tenant-admin', stage: STAGE });

    const alarm = alarmOf(template, 'ApiThrottledAlarm');
    const ids = Object.fromEntries(statsOf(alarm).map((stat) => [stat.Metric.MetricName, stat]));
    expect(dimensionsOf(ids[API_THROTTLED_METRIC]?.Metric.Dimensions)).toEqual(serviceMetricsDimensions(STAGE));
    expect(ids.Count?.Metric.Namespace).toBe('AWS/ApiGateway');
    const byName = (name: string) => alarm.Metrics?.find((query) => query.MetricStat?.Metric.MetricName === name)?.Id;
    expect(returned(alarm)).toBe(
      `IF(FILL(${byName(API_THROTTLED_METRIC)}, 0) >= ${API_THROTTLED_MINIMUM}, 100 * FILL(${byName(API_THROTTLED_METRIC)}, 0) / ${byName('Count')}, 0)`,
    );
    expect(alarm).toMatchObject({ Threshold: API_THROTTLED_PERCENT_THRESHOLD, ComparisonOperator: 'GreaterThanThreshold' });
  });

  it('fire on DynamoDB throttle events of the table and of every index, and on system errors of every operation used', () => {
    const tableId = idOf(template, 'AWS::DynamoDB::Table', 'Table');
    const throttles = alarmOf(template, 'TableThrottlesAlarm');
    expect(
      statsOf(throttles)
        .map((stat) => [stat.Metric.MetricName, dimensionsOf(stat.Metric.Dimensions).GlobalSecondaryIndexName ?? 'table'])
        .sort(),
    ).toEqual(
      ['table', ...tableDefinition.globalIndexes.map(({ indexName }) => indexName)]
        .flatMap((target) => [
          ['ReadThrottleEvents', target],
          ['WriteThrottleEvents', target],
        ])
        .sort(),
    );
    const errors = alarmOf(template, 'TableSystemErrorsAlarm');
    expect(statsOf(errors).map((stat) => dimensionsOf(stat.Metric.Dimensions).Operation)).toEqual([...DYNAMODB_OPERATIONS]);
    for (const alarm of [throttles, errors]) {
      expect(statsOf(alarm).length).toBeLessThanOrEqual(METRICS_PER_ALARM);
      for (const stat of statsOf(alarm)) expect(dimensionsOf(stat.Metric.Dimensions).TableName).toEqual({ Ref: tableId });
      // Summed with FILL: an operation with no data point must not leave the sum without one.
      expect(returned(alarm)).toBe(
        (alarm.Metrics ?? [])
          .filter((query) => query.MetricStat)
          .map((query) => `FILL(${query.Id}, 0)`)
          .join(' + '),
      );
      expect(alarm).toMatchObject({ EvaluationPeriods: 3, DatapointsToAlarm: 2, Threshold: 1, AlarmActions: [topic] });
    }
  });

  it('watch every DynamoDB operation the functions send (the per-operation metrics have no total)', () => {
    const sources = readdirSync('functions', { recursive: true, encoding: 'utf8' })
      .filter((file) => file.endsWith('.ts'))
      .map((file) => readFileSync(join('functions', file), 'utf8'))
      .join('\n');
    // The document client's commands, named after the operation they send.
    const operationOf: Record<string, string> = {
      Get: 'GetItem',
      Put: 'PutItem',
      Update: 'UpdateItem',
      Delete: 'DeleteItem',
      Query: 'Query',
      Scan: 'Scan',
      BatchGet: 'BatchGetItem',
      BatchWrite: 'BatchWriteItem',
      TransactGet: 'TransactGetItems',
      TransactWrite: 'TransactWriteItems',
    };
    const sent = new Set(
      [
        ...sources.matchAll(
          /new (Get|Put|Update|Delete|Query|Scan|BatchGet|BatchWrite|TransactGet|TransactWrite)(?:Item)?Command\(/g,
        ),
      ].map((match) => operationOf[match[1] as string]),
    );
    expect([...sent].sort()).toEqual([...DYNAMODB_OPERATIONS].sort());
  });

  it.each(Object.keys(queueDefinitions) as (keyof typeof queueDefinitions)[])(
    'fire when the oldest message of the %s queue waits too long',
    (name) => {
      expect(alarmOf(template, `${pascalCase(name)}OldestMessageAlarm`)).toMatchObject({
        Namespace: 'AWS/SQS',
        MetricName: 'ApproximateAgeOfOldestMessage',
        Dimensions: [
          {
            Name: 'QueueName',
            Value: { 'Fn::GetAtt': [idOf(template, 'AWS::SQS::Queue', `${pascalCase(name)}Queue`), 'QueueName'] },
          },
        ],
        Statistic: 'Maximum',
        Threshold: OLDEST_MESSAGE_AGE_THRESHOLD_SECONDS[name],
        AlarmActions: [topic],
      });
    },
  );

  it('fire on the account’s concurrent executions at a share of accountConcurrencyLimit', () => {
    const expected = (limit: number) => ({
      Namespace: 'AWS/Lambda',
      MetricName: 'ConcurrentExecutions',
      Statistic: 'Maximum',
      Period: 60,
      Threshold: Math.floor(limit * ACCOUNT_CONCURRENCY_ALARM_SHARE),
      ComparisonOperator: 'GreaterThanOrEqualToThreshold',
      EvaluationPeriods: 3,
      AlarmActions: [topic],
    });
    const alarm = alarmOf(template, 'AccountConcurrencyAlarm');
    expect(alarm).toMatchObject(expected(1000));
    // Account-wide: no FunctionName.
    expect(alarm.Dimensions).toBeUndefined();
    expect(alarmOf(synthesize({ accountConcurrencyLimit: '3000' }), 'AccountConcurrencyAlarm')).toMatchObject({
      Threshold: 2400,
    });
  });

  it.each(queueConsumers.map((consumer) => consumer.handler))(
    'fire within 3 minutes when %s fails most of its messages (ConsumerMessagesFailed over ConsumerMessagesReceived)',
    (handler) => {
      const functionId = idOf(template, 'AWS::Lambda::Function', consumerIdOf(handler));
      const alarm = alarmOf(template, `${pascalCase(handler)}FailureRatioAlarm`);
      const byName = Object.fromEntries(
        (alarm.Metrics ?? []).flatMap((query) => (query.MetricStat ? [[query.MetricStat.Metric.MetricName, query]] : [])),
      );
      for (const name of ['ConsumerMessagesReceived', 'ConsumerMessagesFailed']) {
        expect(byName[name]?.MetricStat).toMatchObject({ Period: 60, Stat: 'Sum' });
        expect(dimensionsOf(byName[name]?.MetricStat?.Metric.Dimensions)).toEqual({
          ...serviceMetricsDimensions(STAGE),
          FunctionName: { Ref: functionId },
        });
      }
      const [received, failed] = [byName.ConsumerMessagesReceived?.Id, byName.ConsumerMessagesFailed?.Id];
      expect(returned(alarm)).toBe(`IF(FILL(${received}, 0) > 0, 100 * FILL(${failed}, 0) / ${received}, 0)`);
      expect(alarm).toMatchObject({
        Threshold: CONSUMER_FAILURE_PERCENT_THRESHOLD,
        ComparisonOperator: 'GreaterThanThreshold',
        EvaluationPeriods: 3,
        DatapointsToAlarm: 3,
        TreatMissingData: 'notBreaching',
        AlarmActions: [topic],
        OKActions: [topic],
      });
    },
  );
});

describe('paging for symptoms', () => {
  let template: Template;
  let page: { Ref: string };
  let ticket: { Ref: string };
  beforeAll(() => {
    template = synthesize();
    page = { Ref: idOf(template, 'AWS::SNS::Topic', 'AlarmsTopic') };
    ticket = { Ref: idOf(template, 'AWS::SNS::Topic', 'TicketAlarmsTopic') };
  });
  /** Every alarm and composite alarm that notifies, by construct path (the logical id without its hash), with its topic. */
  const notifying = (source: Template, topics: Record<'page' | 'ticket', { Ref: string }>) =>
    Object.entries({
      ...source.findResources('AWS::CloudWatch::Alarm'),
      ...source.findResources('AWS::CloudWatch::CompositeAlarm'),
    } as Resources<AlarmProperties>).flatMap(([id, { Properties: alarm }]) => {
      if (!alarm.AlarmActions) return [];
      const severity = Object.entries(topics).find(
        ([, ref]) => JSON.stringify([ref]) === JSON.stringify(alarm.AlarmActions),
      )?.[0];
      // Either topic, alone, on alarm and on recovery alike.
      expect(severity, id).toBeDefined();
      expect(alarm.OKActions, id).toEqual(alarm.AlarmActions);
      return [[id.replace(/[0-9A-F]{8}$/, ''), severity as string] as const];
    });
  const paged = (entries: (readonly [string, string])[]) =>
    entries
      .filter(([, severity]) => severity === 'page')
      .map(([id]) => id)
      .sort();

  it('page on the user-facing symptoms only (the error budget, latency, the dispatcher, missed slots); everything else tickets', () => {
    const all = notifying(template, { page, ticket });
    expect(paged(all)).toEqual(
      [
        'MonitoringApiErrorBudgetBurnAlarm',
        'MonitoringApiLatencyAlarm',
        'MonitoringScheduleDispatcherNotRunningAlarm',
        'MonitoringScheduleMissesAlarm',
      ].sort(),
    );
    // The DLQs' too (lib/service-queues.ts); and a good many in all.
    expect(all.filter(([, severity]) => severity === 'ticket').map(([id]) => id)).toEqual(
      expect.arrayContaining(['FireDeadLetterAlarm', 'MonitoringLambdaErrorsAlarm', 'MonitoringApiErrorBudgetSteadyBurnAlarm']),
    );
    expect(all.length).toBeGreaterThan(20);
  });

  it('tell a release which paging alarms are symptoms: those that read no function (the functions’ stacks would wait on them)', () => {
    const stack = serviceStack();
    const monitoring = stack.node.findChild('Monitoring') as ServiceMonitoring;
    expect(monitoring.symptomAlarms.map((alarm) => alarm.node.id).sort()).toEqual(
      ['ApiErrorBudgetBurnAlarm', 'ApiLatencyAlarm', 'ScheduleMissesAlarm'].sort(),
    );
  });

  it('page from the edge on its probe only; its WAF rules, 5xx and origin latency ticket', () => {
    const { edge } = synthesizeProduction({ pageEmail: 'pager@example.com' });
    if (!edge) throw new Error('The production stage has the edge');
    const topics = {
      page: { Ref: idOf(edge, 'AWS::SNS::Topic', 'AlarmsTopic') },
      ticket: { Ref: idOf(edge, 'AWS::SNS::Topic', 'TicketAlarmsTopic') },
    };
    const all = notifying(edge, topics);
    expect(paged(all)).toEqual(['EdgeProbeAlarm']);
    expect(all.map(([id]) => id)).toEqual(expect.arrayContaining(['PerCallerBlockedAlarm', 'ApiDistribution5xxAlarm']));
    edge.hasOutput('EdgePageTopicArn', { Value: topics.page });
    edge.hasOutput('EdgeTicketTopicArn', { Value: topics.ticket });
    edge.hasResourceProperties('AWS::SNS::Subscription', { Endpoint: 'pager@example.com', TopicArn: topics.page });
    expect(
      Object.values(edge.findResources('AWS::SNS::Subscription') as Resources<{ Endpoint: string; TopicArn: unknown }>)
        .filter(({ Properties }) => Properties.Endpoint === 'pager@example.com')
        .map(({ Properties }) => Properties.TopicArn),
    ).toEqual([topics.page]);
  });

  describe('the error budget', () => {
    const apiRef = (source: Template) => ({ Ref: idOf(source, 'AWS::ApiGatewayV2::Api', 'Api') });
    const windowOf = (source: Template, rule: string, kind: 'Long' | 'Short') =>
      alarmOf(source, `ApiErrorBudget${rule}${kind}Window`);

    it.each(BURN_RATE_RULES.map((rule) => [rule.name, rule] as const))(
      'fires %s on both windows’ 5xx share over burn rate × (100 − objective), from the API’s 5xx and Count',
      (_name, rule) => {
        for (const [kind, window] of [
          ['Long', rule.longWindow],
          ['Short', rule.shortWindow],
        ] as const) {
          const alarm = windowOf(template, rule.name, kind);
          const stats = statsOf(alarm);
          expect(stats.map((stat) => [stat.Metric.Namespace, stat.Metric.MetricName, stat.Stat, stat.Period]).sort()).toEqual([
            ['AWS/ApiGateway', '5xx', 'Sum', window.toSeconds()],
            ['AWS/ApiGateway', 'Count', 'Sum', window.toSeconds()],
          ]);
          for (const stat of stats) expect(stat.Metric.Dimensions).toEqual([{ Name: 'ApiId', Value: apiRef(template) }]);
          const byName = (name: string) => alarm.Metrics?.find((query) => query.MetricStat?.Metric.MetricName === name)?.Id;
          const [errors, requests] = [byName('5xx'), byName('Count')];
          const share = `100 * FILL(${errors}, 0) / ${requests}`;
          // The long window needs a few errors; the short one keeps its state through a quiet spell (no requests, no data).
          expect(returned(alarm)).toBe(
            kind === 'Long' ? `IF(FILL(${errors}, 0) >= ${BURN_RATE_MINIMUM_ERRORS}, ${share}, 0)` : share,
          );
          expect(alarm.TreatMissingData).toBe(kind === 'Long' ? 'notBreaching' : 'ignore');
          expect(alarm.Threshold).toBeCloseTo(rule.burnRate * (100 - AVAILABILITY_OBJECTIVE.fallback), 10);
          expect(alarm).toMatchObject({ ComparisonOperator: 'GreaterThanThreshold', EvaluationPeriods: 1 });
          // The composite notifies.
          expect(alarm.AlarmActions).toBeUndefined();
        }
      },
    );

    it('follows the workbook: 14.4 times over 1 hour and 5 minutes, 6 times over 6 hours and 30 minutes page; 1 time over 3 days and 6 hours tickets', () => {
      expect(
        BURN_RATE_RULES.map((rule) => [rule.severity, rule.burnRate, rule.longWindow.toMinutes(), rule.shortWindow.toMinutes()]),
      ).toEqual([
        ['page', 14.4, 60, 5],
        ['page', 6, 360, 30],
        ['ticket', 1, 3 * 24 * 60, 360],
      ]);
      expect(AVAILABILITY_OBJECTIVE.fallback).toBe(99.9);
      // 14.4 × 0.1% = 1.44%: 2% of a 30-day budget in an hour.
      expect(windowOf(template, 'Fast', 'Long').Threshold).toBe(1.44);
    });

    it('pages when the long AND the short window of either paging rule burn; tickets on the steady rule’s two', () => {
      const composites = template.findResources('AWS::CloudWatch::CompositeAlarm') as Resources<{
        AlarmRule: { 'Fn::Join': [string, unknown[]] };
        AlarmActions?: unknown[];
      }>;
      /** The rule with each alarm's ARN written as the construct path of the alarm. */
      const ruleOf = (name: string) => {
        const [, parts] = composites[idOf(template, 'AWS::CloudWatch::CompositeAlarm', `Monitoring${name}`)]?.Properties
          .AlarmRule['Fn::Join'] ?? ['', []];
        return parts
          .map((part) =>
            typeof part === 'string'
              ? part
              : (part as { 'Fn::GetAtt': [string] })['Fn::GetAtt'][0].replace(/^Monitoring|[0-9A-F]{8}$/g, ''),
          )
          .join('');
      };
      const both = (rule: string) => `(ALARM("ApiErrorBudget${rule}LongWindow") AND ALARM("ApiErrorBudget${rule}ShortWindow"))`;
      expect(ruleOf('ApiErrorBudgetBurnAlarm')).toBe(`(${both('Fast')} OR ${both('Slow')})`);
      expect(ruleOf('ApiErrorBudgetSteadyBurnAlarm')).toBe(`(${both('Steady')})`);
    });

    it('takes its objective from availabilityObjective, and refuses one outside 95 to 99.99', () => {
      const custom = synthesize({ availabilityObjective: '99.5' });
      expect(BURN_RATE_RULES.map((rule) => windowOf(custom, rule.name, 'Long').Threshold)).toEqual([7.2, 3, 0.5]);
      expect(windowOf(synthesize({ availabilityObjective: 99.95 }), 'Fast', 'Short').Threshold).toBeCloseTo(0.72, 10);
      for (const value of ['90', '100', '99.999', 'three nines', 94.9])
        expect(() => synthesize({ availabilityObjective: value }), String(value)).toThrow(
          /Context availabilityObjective must be a percentage from 95 to 99.99/,
        );
    });
  });

  it(`ticket when a function fails more than ${LAMBDA_ERROR_PERCENT_THRESHOLD}% of its invocations over 15 minutes, at least ${LAMBDA_ERRORS_MINIMUM} times`, () => {
    const composite = (
      template.findResources('AWS::CloudWatch::CompositeAlarm') as Resources<{ AlarmRule: unknown; AlarmActions: unknown[] }>
    )[idOf(template, 'AWS::CloudWatch::CompositeAlarm', 'MonitoringLambdaErrorsAlarm')];
    expect(composite?.Properties.AlarmActions).toEqual([ticket]);
    const groupIds = [...JSON.stringify(composite?.Properties.AlarmRule).matchAll(/"Fn::GetAtt":\["([^"]+)"/g)].map(
      (match) => match[1] as string,
    );
    const alarms = template.findResources('AWS::CloudWatch::Alarm') as Resources<AlarmProperties>;
    const watched: unknown[] = [];
    for (const groupId of groupIds) {
      const group = alarms[groupId]?.Properties as AlarmProperties;
      expect(group).toMatchObject({
        Threshold: LAMBDA_ERROR_PERCENT_THRESHOLD,
        ComparisonOperator: 'GreaterThanThreshold',
        EvaluationPeriods: 1,
        TreatMissingData: 'notBreaching',
      });
      expect(group.AlarmActions, groupId).toBeUndefined();
      const queries = group.Metrics ?? [];
      const byId = Object.fromEntries(queries.map((query) => [query.Id, query]));
      expect(statsOf(group).length).toBeLessThanOrEqual(METRICS_PER_ALARM);
      // One share per function, of its errors over its invocations, and the group's value is the highest share.
      const shares = queries.filter((query) => query.Expression?.startsWith('IF('));
      expect(returned(group)).toBe(`MAX([${shares.map((share) => share.Id).join(', ')}])`);
      for (const share of shares) {
        const [, errors, invocations] =
          /^IF\(FILL\((\w+), 0\) >= (?:\d+), 100 \* FILL\(\1, 0\) \/ (\w+), 0\)$/.exec(share.Expression ?? '') ?? [];
        expect(share.Expression).toBe(
          `IF(FILL(${errors}, 0) >= ${LAMBDA_ERRORS_MINIMUM}, 100 * FILL(${errors}, 0) / ${invocations}, 0)`,
        );
        const [errorsStat, invocationsStat] = [byId[errors ?? '']?.MetricStat, byId[invocations ?? '']?.MetricStat];
        expect(errorsStat).toMatchObject({ Metric: { Namespace: 'AWS/Lambda', MetricName: 'Errors' }, Period: 900, Stat: 'Sum' });
        expect(invocationsStat).toMatchObject({
          Metric: { Namespace: 'AWS/Lambda', MetricName: 'Invocations' },
          Period: 900,
          Stat: 'Sum',
        });
        // Both of one function.
        expect(errorsStat?.Metric.Dimensions).toEqual(invocationsStat?.Metric.Dimensions);
        watched.push(JSON.stringify(errorsStat?.Metric.Dimensions));
      }
    }
    // Every function of the service, once: the ones whose throttles are watched.
    const throttled = Object.entries(alarms)
      .filter(([id]) => /^MonitoringLambdaThrottlesGroup/.test(id))
      .flatMap(([, { Properties }]) => statsOf(Properties).map((stat) => JSON.stringify(stat.Metric.Dimensions)));
    expect(throttled.length).toBeGreaterThan(50);
    expect([...watched].sort()).toEqual([...throttled].sort());
  });

  it(`count 401s from the access log and ticket on more than ${API_UNAUTHORIZED_PERCENT_THRESHOLD}% of answers (at least ${API_UNAUTHORIZED_MINIMUM}) in 5 minutes`, () => {
    const filters = Object.values(
      template.findResources('AWS::Logs::MetricFilter') as Resources<{
        FilterPattern: string;
        LogGroupName: unknown;
        MetricTransformations: { MetricName: string; MetricNamespace: string; Dimensions: unknown }[];
      }>,
    ).filter(({ Properties }) => Properties.MetricTransformations[0]?.MetricName === API_UNAUTHORIZED_METRIC);
    expect(filters).toHaveLength(1);
    const filter = filters[0]?.Properties;
    expect(filter).toMatchObject({
      LogGroupName: { Ref: idOf(template, 'AWS::Logs::LogGroup', 'ApiAccessLogs') },
      FilterPattern: '{ $.status = "401" }',
      MetricTransformations: [
        {
          MetricNamespace: SERVICE_METRICS_NAMESPACE,
          MetricValue: '1',
          Dimensions: [
            { Key: 'service', Value: '$.service' },
            { Key: 'stage', Value: '$.stage' },
          ],
        },
      ],
    });

    // CloudWatch Logs runs the pattern on AWS only: here, the pattern's one comparison is checked against access log
    // lines as API Gateway writes them from the stage's format ($context.status is a string in the line).
    const [, field, value] = /^\{ \$\.(\w+) = "([^"]*)" \}$/.exec(filter?.FilterPattern ?? '') ?? [];
    const lineWith = (status: string) =>
      JSON.parse(accessLogFormat(STAGE).replace('"$context.status"', JSON.stringify(status))) as Record<string, unknown>;
    expect(lineWith('401')[field ?? '']).toBe(value);
    expect(lineWith('200')[field ?? '']).not.toBe(value);
    expect(lineWith('401')).toMatchObject(serviceMetricsDimensions(STAGE));

    const alarm = alarmOf(template, 'ApiUnauthorizedAlarm');
    const byName = (name: string) => alarm.Metrics?.find((query) => query.MetricStat?.Metric.MetricName === name)?.Id;
    const [unauthorized, requests] = [byName(API_UNAUTHORIZED_METRIC), byName('Count')];
    expect(returned(alarm)).toBe(
      `IF(FILL(${unauthorized}, 0) >= ${API_UNAUTHORIZED_MINIMUM}, 100 * FILL(${unauthorized}, 0) / ${requests}, 0)`,
    );
    expect(
      dimensionsOf(statsOf(alarm).find((stat) => stat.Metric.MetricName === API_UNAUTHORIZED_METRIC)?.Metric.Dimensions),
    ).toEqual(serviceMetricsDimensions(STAGE));
    expect(alarm).toMatchObject({
      Threshold: API_UNAUTHORIZED_PERCENT_THRESHOLD,
      ComparisonOperator: 'GreaterThanThreshold',
      AlarmActions: [ticket],
    });
  });

  describe('administration calls to the keys', () => {
    type RuleProperties = { EventPattern: unknown; Targets: { Arn: unknown }[] };
    const ruleOf = (name: string) =>
      (template.findResources('AWS::Events::Rule') as Resources<RuleProperties>)[
        idOf(template, 'AWS::Events::Rule', `Monitoring${name}`)
      ]?.Properties;
    const keyrings = () => [
      { Ref: idOf(template, 'AWS::SecretsManager::Secret', 'SigningKeys') },
      { Ref: idOf(template, 'AWS::SecretsManager::Secret', 'TokenKeys') },
    ];

    it('page on the table key’s deletion, disabling and policy, matched on its ARN', () => {
      expect(ruleOf('TableKeyAdministrationRule')).toEqual({
        Description: expect.any(String),
        State: 'ENABLED',
        EventPattern: {
          source: ['aws.kms'],
          'detail-type': [CLOUDTRAIL_API_CALL],
          detail: {
            eventSource: ['kms.amazonaws.com'],
            eventName: ['ScheduleKeyDeletion', 'DisableKey', 'PutKeyPolicy'],
            resources: { ARN: [{ 'Fn::GetAtt': [idOf(template, 'AWS::KMS::Key', 'TableKey'), 'Arn'] }] },
          },
        },
        Targets: [{ Arn: page, Id: 'Target0' }],
      });
      expect([...KEY_ADMINISTRATION_EVENTS]).toEqual(['ScheduleKeyDeletion', 'DisableKey', 'PutKeyPolicy']);
    });

    it('page on the keyrings’ deletion, replacement, policy and copies; ticket on their writes (a rotation writes too)', () => {
      const secretRule = (eventName: readonly string[]) => ({
        source: ['aws.secretsmanager'],
        'detail-type': [CLOUDTRAIL_API_CALL],
        detail: {
          eventSource: ['secretsmanager.amazonaws.com'],
          eventName: [...eventName],
          responseElements: { arn: keyrings() },
        },
      });
      expect(ruleOf('KeyringAdministrationRule')).toMatchObject({
        EventPattern: secretRule(SECRET_ADMINISTRATION_EVENTS),
        Targets: [{ Arn: page }],
      });
      expect(ruleOf('KeyringWriteRule')).toMatchObject({
        EventPattern: secretRule(SECRET_WRITE_EVENTS),
        Targets: [{ Arn: ticket }],
      });
      expect(ruleOf('KeyringAdministrationRule')?.EventPattern).toEqual(secretRule(SECRET_ADMINISTRATION_EVENTS));
      expect(ruleOf('KeyringWriteRule')?.EventPattern).toEqual(secretRule(SECRET_WRITE_EVENTS));
      expect(SECRET_ADMINISTRATION_EVENTS).toEqual(expect.arrayContaining(['DeleteSecret', 'PutResourcePolicy', 'UpdateSecret']));
      // The admin CLI's rotations write with PutSecretValue: a ticket, never a page.
      expect(SECRET_WRITE_EVENTS).toContain('PutSecretValue');
      expect(SECRET_ADMINISTRATION_EVENTS).not.toContain('PutSecretValue');
      // Nothing else on the event bus targets a topic.
      const topicTargets = Object.values(template.findResources('AWS::Events::Rule') as Resources<RuleProperties>).filter(
        ({ Properties }) =>
          Properties.Targets.some(({ Arn }) => [page, ticket].some((ref) => JSON.stringify(ref) === JSON.stringify(Arn))),
      );
      expect(topicTargets).toHaveLength(3);
    });

    it('let this account’s EventBridge rules publish to both topics and use their key', () => {
      const policies = Object.values(
        template.findResources('AWS::SNS::TopicPolicy') as Resources<{
          Topics: unknown[];
          PolicyDocument: { Statement: object[] };
        }>,
      );
      for (const topicRef of [page, ticket]) {
        const policy = policies.find(({ Properties }) => JSON.stringify(Properties.Topics) === JSON.stringify([topicRef]));
        expect(policy?.Properties.PolicyDocument.Statement).toContainEqual(
          expect.objectContaining({
            Effect: 'Allow',
            Principal: { Service: 'events.amazonaws.com' },
            Action: 'sns:Publish',
            Resource: topicRef,
            Condition: {
              ArnLike: {
                'aws:SourceArn': {
                  'Fn::Join': [
                    '',
                    [
                      'arn:',
                      { Ref: 'AWS::Partition' },
                      ':events:',
                      { Ref: 'AWS::Region' },
                      ':',
                      { Ref: 'AWS::AccountId' },
                      ':rule/*',
                    ],
                  ],
                },
              },
              StringEquals: { 'aws:SourceAccount': { Ref: 'AWS::AccountId' } },
            },
          }),
        );
      }
      const topics = template.findResources('AWS::SNS::Topic') as Resources<{ KmsMasterKeyId: unknown }>;
      // One key for both.
      expect(topics[page.Ref]?.Properties.KmsMasterKeyId).toEqual(topics[ticket.Ref]?.Properties.KmsMasterKeyId);
      const keyId = (topics[page.Ref]?.Properties.KmsMasterKeyId as { 'Fn::GetAtt': [string] })['Fn::GetAtt'][0];
      const key = (template.findResources('AWS::KMS::Key') as Resources<{ KeyPolicy: { Statement: object[] } }>)[keyId];
      expect(key?.Properties.KeyPolicy.Statement).toContainEqual(
        expect.objectContaining({
          Effect: 'Allow',
          Principal: { Service: 'events.amazonaws.com' },
          Action: ['kms:Decrypt', 'kms:GenerateDataKey*'],
        }),
      );
    });
  });
});
