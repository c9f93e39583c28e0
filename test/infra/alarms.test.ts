/**
 * Alarms for what breaks (issue 26): API p99 latency and 429s, DynamoDB throttles and system
 * errors, the oldest message of every queue, the account's concurrent executions, and each queue
 * consumer's failure ratio; the service's own metrics, and so their alarms, carry the stage.
 * docs/operations.md has a runbook entry for each (operations.test.ts checks every alarm is named there).
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Template } from 'aws-cdk-lib/assertions';
import { beforeAll, describe, expect, it } from 'vitest';
import { stageVariable } from '#functions/core/observability/names.ts';
import { queueDefinitions } from '#functions/core/store/queue-definitions.ts';
import { tableDefinition } from '#functions/core/store/table-definition.ts';
import { queueConsumers } from '#functions/routes.ts';
import { consumerIdOf, pascalCase } from '#lib/construct-ids.ts';
import {
  ACCOUNT_CONCURRENCY_ALARM_SHARE,
  API_LATENCY_P99_THRESHOLD_MS,
  API_THROTTLED_METRIC,
  API_THROTTLED_MINIMUM,
  API_THROTTLED_PERCENT_THRESHOLD,
  CONSUMER_FAILURE_PERCENT_THRESHOLD,
  DYNAMODB_OPERATIONS,
  METRICS_PER_ALARM,
  OLDEST_MESSAGE_AGE_THRESHOLD_SECONDS,
  SERVICE_METRICS_NAMESPACE,
  serviceMetricsDimensions,
} from '#lib/monitoring.ts';
import { ServiceStack } from '#lib/service-stack.ts';
import { testApp } from '../support/cdk-app.ts';

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

const synthesize = (context: Record<string, unknown> = {}) =>
  Template.fromStack(new ServiceStack(testApp(context), 'Test', { stage: STAGE, tenantBaseDomain: 'bi.example.com' }));

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
  let topic: { Ref: string };
  beforeAll(() => {
    template = synthesize();
    topic = { Ref: Object.keys(template.findResources('AWS::SNS::Topic'))[0] ?? '' };
  });

  it('put the stage on every function, and in every alarm on the service’s own metrics', () => {
    const functions = Object.values(template.findResources('AWS::Lambda::Function')) as {
      Properties: { Environment?: { Variables?: Record<string, unknown> } };
    }[];
    expect(functions.length).toBeGreaterThan(50);
    for (const fn of functions) expect(fn.Properties.Environment?.Variables?.[stageVariable]).toBe(STAGE);

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

  it(`fire on the API's p99 latency above ${API_LATENCY_P99_THRESHOLD_MS} ms for 15 minutes, ignoring periods too quiet for a p99`, () => {
    expect(alarmOf(template, 'ApiLatencyAlarm')).toMatchObject({
      Namespace: 'AWS/ApiGateway',
      MetricName: 'Latency',
      ExtendedStatistic: 'p99',
      Period: 300,
      Threshold: API_LATENCY_P99_THRESHOLD_MS,
      ComparisonOperator: 'GreaterThanThreshold',
      EvaluationPeriods: 3,
      DatapointsToAlarm: 3,
      EvaluateLowSampleCountPercentile: 'ignore',
      AlarmActions: [topic],
      OKActions: [topic],
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
