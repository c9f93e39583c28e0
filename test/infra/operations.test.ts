/**
 * The operational side of ServiceStack: the alarm topic, every alarm and where it notifies, the
 * dashboard, and the API stage's throttling and access log. Expectations come from the route table
 * and the queue definitions, so a new function or queue that is not watched fails here.
 */
import { readFileSync } from 'node:fs';
import { Match, type Template } from 'aws-cdk-lib/assertions';
import { beforeAll, describe, expect, it } from 'vitest';
import { queueDefinitions } from '#functions/core/store/queue-definitions.ts';
import { queueConsumers, routes, timedFunctions } from '#functions/routes.ts';
import { dispatchSettingLimits, dispatchSettingVariables } from '#functions/core/schedules/dispatch-settings.ts';
import { DEFAULT_API_BURST_LIMIT, DEFAULT_API_RATE_LIMIT, FIRE_CONCURRENCY } from '#lib/deployment-settings.ts';
import {
  FIRE_LATENESS_P99_THRESHOLD_MS,
  DYNAMODB_OPERATIONS,
  METRICS_PER_ALARM,
  SERVICE_METRIC_NAMES,
  serviceMetricsDimensions,
  SERVICE_METRICS_NAMESPACE,
} from '#lib/monitoring.ts';
import { consumerIdOf } from '#lib/construct-ids.ts';
import { ServiceStack } from '#lib/service-stack.ts';
import { testApp } from '#test/support/cdk-app.ts';
import { deployTimeFunctionIds, liveEventSourceOf, referencedIds, wholeTemplate } from '#test/support/whole-template.ts';

const TENANT_BASE_DOMAIN = 'bi.example.com';
const STAGE = 'test';
/** The dimensions of the service's own metrics in this stage: service and stage. */
const SERVICE_METRICS_DIMENSIONS = serviceMetricsDimensions(STAGE);

interface CfnResource<P = Record<string, unknown>> {
  Type: string;
  Properties: P;
}
type Ref = { Ref: string };
interface MetricStat {
  Metric: { Namespace: string; MetricName: string; Dimensions?: { Name: string; Value: unknown }[] };
  Period: number;
  Stat: string;
}
interface MetricQuery {
  Id: string;
  Expression?: string;
  MetricStat?: MetricStat;
  ReturnData?: boolean;
}
type AlarmProperties = {
  AlarmDescription?: string;
  AlarmActions?: unknown[];
  OKActions?: unknown[];
  Namespace?: string;
  MetricName?: string;
  Dimensions?: { Name: string; Value: unknown }[];
  Statistic?: string;
  ExtendedStatistic?: string;
  Period?: number;
  Metrics?: MetricQuery[];
  Threshold?: number;
  ComparisonOperator?: string;
  EvaluationPeriods?: number;
  DatapointsToAlarm?: number;
  TreatMissingData?: string;
};
type AlarmResource = CfnResource<AlarmProperties>;
type CompositeAlarmResource = CfnResource<{ AlarmDescription?: string; AlarmActions?: unknown[]; AlarmRule: unknown }>;

function synthesize(context: Record<string, unknown> = {}, props: { tenantCertificateArn?: string } = {}): Template {
  const app = testApp(context);
  return wholeTemplate(new ServiceStack(app, 'Test', { stage: STAGE, tenantBaseDomain: TENANT_BASE_DOMAIN, ...props }));
}

function resourcesOfType<R extends CfnResource>(template: Template, type: string): Record<string, R> {
  return template.findResources(type) as Record<string, R>;
}

function single<T>(items: readonly T[], what: string): T {
  if (items.length !== 1) throw new Error(`Expected exactly one ${what}, found ${items.length}`);
  return items[0] as T;
}

/** CDK logical ids are `<construct path without slashes><8 hex hash>`. */
const isLogicalIdOf = (constructPath: string, logicalId: string) => new RegExp(`^${constructPath}[0-9A-F]{8}$`).test(logicalId);

function logicalIdOf(template: Template, type: string, constructPath: string): string {
  return single(
    Object.keys(template.findResources(type)).filter((id) => isLogicalIdOf(constructPath, id)),
    `${type} ${constructPath}`,
  );
}

const dimensionRef = (stat: MetricStat | undefined, name: string) =>
  (stat?.Metric.Dimensions?.find((dimension) => dimension.Name === name)?.Value as Ref | undefined)?.Ref;

/**
 * The functions that serve the service (routes, consumers, timers): not those custom resources run, which run only
 * during a deploy and whose failure fails the deploy itself.
 */
function serviceFunctionIdsOf(source: Template): string[] {
  const deployTime = deployTimeFunctionIds(source);
  return Object.keys(source.findResources('AWS::Lambda::Function')).filter((id) => !deployTime.has(id));
}

describe('ServiceStack operations', () => {
  let template: Template;
  let pageTopicId: string;
  let ticketTopicId: string;
  let functionIds: string[];
  const alarms = () => resourcesOfType<AlarmResource>(template, 'AWS::CloudWatch::Alarm');
  const composites = () => resourcesOfType<CompositeAlarmResource>(template, 'AWS::CloudWatch::CompositeAlarm');
  // Which alarm pages and which tickets: test/infra/alarms.test.ts.
  const pageAction = () => [{ Ref: pageTopicId }];
  const ticketAction = () => [{ Ref: ticketTopicId }];

  beforeAll(() => {
    template = synthesize();
    pageTopicId = logicalIdOf(template, 'AWS::SNS::Topic', 'AlarmsTopic');
    ticketTopicId = logicalIdOf(template, 'AWS::SNS::Topic', 'TicketAlarmsTopic');
    functionIds = serviceFunctionIdsOf(template);
  });

  describe('alarm topics', () => {
    it.each([
      ['page', 'PageTopicArn'],
      ['ticket', 'TicketTopicArn'],
    ] as const)(
      'are encrypted with a rotated customer managed key that CloudWatch may use, and are outputs: %s',
      (severity, output) => {
        const topicId = severity === 'page' ? pageTopicId : ticketTopicId;
        const topic = resourcesOfType<CfnResource<{ KmsMasterKeyId?: unknown }>>(template, 'AWS::SNS::Topic')[topicId];
        // Not alias/aws/sns: CloudWatch cannot publish to a topic under the AWS managed key.
        const keyId = single(
          Object.keys(template.findResources('AWS::KMS::Key')).filter(
            (id) => JSON.stringify(topic?.Properties.KmsMasterKeyId) === JSON.stringify({ 'Fn::GetAtt': [id, 'Arn'] }),
          ),
          "the topic's KMS key",
        );
        const key = resourcesOfType<CfnResource<{ EnableKeyRotation?: boolean; KeyPolicy: { Statement: object[] } }>>(
          template,
          'AWS::KMS::Key',
        )[keyId];
        expect(key?.Properties.EnableKeyRotation).toBe(true);
        expect(key?.Properties.KeyPolicy.Statement).toContainEqual(
          expect.objectContaining({
            Effect: 'Allow',
            Principal: { Service: 'cloudwatch.amazonaws.com' },
            Action: expect.arrayContaining(['kms:Decrypt', 'kms:GenerateDataKey*']),
          }),
        );
        template.hasOutput(output, { Value: { Ref: topicId } });
      },
    );

    it.each(['page', 'ticket'] as const)(
      'refuse publishing without TLS and let only this account’s alarms publish through CloudWatch: %s',
      (severity) => {
        const topicId = severity === 'page' ? pageTopicId : ticketTopicId;
        const policy = single(
          Object.values(
            resourcesOfType<CfnResource<{ Topics: unknown[]; PolicyDocument: { Statement: object[] } }>>(
              template,
              'AWS::SNS::TopicPolicy',
            ),
          ).filter((candidate) => JSON.stringify(candidate.Properties.Topics) === JSON.stringify([{ Ref: topicId }])),
          'topic policy',
        );
        expect(policy.Properties.PolicyDocument.Statement).toContainEqual(
          expect.objectContaining({ Effect: 'Deny', Condition: { Bool: { 'aws:SecureTransport': 'false' } } }),
        );
        expect(policy.Properties.PolicyDocument.Statement).toContainEqual(
          expect.objectContaining({
            Effect: 'Allow',
            Principal: { Service: 'cloudwatch.amazonaws.com' },
            Action: 'sns:Publish',
            Condition: expect.objectContaining({ StringEquals: { 'aws:SourceAccount': { Ref: 'AWS::AccountId' } } }),
          }),
        );
      },
    );

    it('subscribe the alarmEmail context value to both, pageEmail to the page topic only, and nobody without them', () => {
      template.resourceCountIs('AWS::SNS::Subscription', 0);
      const subscribed = synthesize({ alarmEmail: 'ops@example.com', pageEmail: 'pager@example.com' });
      const subscriptions = Object.values(
        resourcesOfType<CfnResource<{ Protocol: string; Endpoint: string; TopicArn: Ref }>>(subscribed, 'AWS::SNS::Subscription'),
      ).map(({ Properties: { Protocol, Endpoint, TopicArn } }) => [Protocol, Endpoint, TopicArn.Ref]);
      const topicOf = (constructPath: string) => logicalIdOf(subscribed, 'AWS::SNS::Topic', constructPath);
      expect(subscriptions.sort()).toEqual(
        [
          ['email', 'ops@example.com', topicOf('AlarmsTopic')],
          ['email', 'ops@example.com', topicOf('TicketAlarmsTopic')],
          ['email', 'pager@example.com', topicOf('AlarmsTopic')],
        ].sort(),
      );
      expect(() => synthesize({ alarmEmail: 'not an address' })).toThrow(/alarmEmail/);
      expect(() => synthesize({ pageEmail: 'pager' })).toThrow(/pageEmail/);
    });
  });

  describe('alarms', () => {
    it('all notify a topic, on alarm and on recovery, and say what they mean and where the runbook is', () => {
      // Group and window alarms feed a composite alarm, which notifies for them (next tests); the release alarms
      // of the nested stacks are CodeDeploy's.
      const silent = /LambdaErrorsGroup|LambdaThrottlesGroup|ApiErrorBudget\w+Window|Release(Errors|Latency)/;
      const notifying = [...Object.entries(alarms()).filter(([id]) => !silent.test(id)), ...Object.entries(composites())];
      expect(notifying.length).toBeGreaterThanOrEqual(4 + Object.keys(queueDefinitions).length);
      for (const [id, alarm] of notifying) {
        expect([pageAction(), ticketAction()], id).toContainEqual(alarm.Properties.AlarmActions);
        expect((alarm.Properties as AlarmProperties).OKActions, id).toEqual(alarm.Properties.AlarmActions);
        expect(alarm.Properties.AlarmDescription, id).toMatch(/docs\/operations\.md/);
        expect(alarm.Properties.AlarmDescription?.length ?? 0, id).toBeGreaterThan(100);
      }
    });

    // The errors' groups are shares of invocations: test/infra/alarms.test.ts.
    it.each(['Throttles'])('watches Lambda %s of every function, summed in groups behind one composite alarm', (kind) => {
      const composite = composites()[logicalIdOf(template, 'AWS::CloudWatch::CompositeAlarm', `MonitoringLambda${kind}Alarm`)];
      expect(composite?.Properties.AlarmActions).toEqual(ticketAction());
      const groupIds = referencedIds(composite?.Properties.AlarmRule);
      expect(groupIds.length).toBe(Math.ceil(functionIds.length / METRICS_PER_ALARM));
      const watched: string[] = [];
      for (const groupId of groupIds) {
        const group = alarms()[groupId];
        expect(group, groupId).toBeDefined();
        // The composite notifies; a group notifying too would send everything twice.
        expect(group?.Properties.AlarmActions, groupId).toBeUndefined();
        expect(group?.Properties).toMatchObject({
          Threshold: 1,
          ComparisonOperator: 'GreaterThanOrEqualToThreshold',
          TreatMissingData: 'notBreaching',
        });
        const queries = group?.Properties.Metrics ?? [];
        const members = queries.filter((query) => query.MetricStat);
        expect(members.length).toBeLessThanOrEqual(METRICS_PER_ALARM);
        const expression = single(
          queries.filter((query) => query.Expression),
          'expression',
        ).Expression;
        for (const member of members) {
          expect(member.MetricStat?.Metric).toMatchObject({ Namespace: 'AWS/Lambda', MetricName: kind });
          expect(member.MetricStat).toMatchObject({ Stat: 'Sum', Period: 300 });
          // Every member is in the sum.
          expect(expression).toContain(`FILL(${member.Id}, 0)`);
          watched.push(dimensionRef(member.MetricStat, 'FunctionName') as string);
        }
      }
      expect(watched.sort()).toEqual([...functionIds].sort());
    });

    it.each(timedFunctions.map((timed) => [timed.handler, timed] as const))(
      'fires when %s has not been invoked for 5 runs in a row, missing data counting as not running',
      (_name, timed) => {
        const functionId = single(
          functionIds.filter((id) => isLogicalIdOf(consumerIdOf(timed.handler), id)),
          `function of ${timed.handler}`,
        );
        const matching = Object.values(alarms()).filter(
          (alarm) =>
            alarm.Properties.MetricName === 'Invocations' &&
            (alarm.Properties.Dimensions?.[0]?.Value as Ref | undefined)?.Ref === functionId,
        );
        expect(single(matching, `not-running alarm of ${timed.handler}`).Properties).toMatchObject({
          Namespace: 'AWS/Lambda',
          Statistic: 'Sum',
          Period: timed.everyMinutes * 60,
          Threshold: 1,
          ComparisonOperator: 'LessThanThreshold',
          EvaluationPeriods: 5,
          DatapointsToAlarm: 5,
          TreatMissingData: 'breaching',
          AlarmActions: timed.handler === 'schedule-dispatcher' ? pageAction() : ticketAction(),
        });
      },
    );

    it('names the schedule dispatcher alarm as docs/operations.md does', () => {
      const id = logicalIdOf(template, 'AWS::CloudWatch::Alarm', 'MonitoringScheduleDispatcherNotRunningAlarm');
      expect(alarms()[id]?.Properties.MetricName).toBe('Invocations');
    });

    it(`fires when schedules fire late: p99 of ScheduleFireLateness over ${FIRE_LATENESS_P99_THRESHOLD_MS / 1000} s in 5 minutes`, () => {
      const alarm = alarms()[logicalIdOf(template, 'AWS::CloudWatch::Alarm', 'MonitoringScheduleFireLatenessAlarm')];
      expect(alarm?.Properties).toMatchObject({
        Namespace: SERVICE_METRICS_NAMESPACE,
        MetricName: 'ScheduleFireLateness',
        Dimensions: Object.entries(SERVICE_METRICS_DIMENSIONS).map(([Name, Value]) => ({ Name, Value })),
        ExtendedStatistic: 'p99',
        Period: 300,
        Threshold: 60_000,
        ComparisonOperator: 'GreaterThanThreshold',
        TreatMissingData: 'notBreaching',
        AlarmActions: ticketAction(),
      });
    });

    it('fires when any schedule slot is missed (ScheduleMisses over 0 in 5 minutes), named as docs/operations.md does', () => {
      const alarm = alarms()[logicalIdOf(template, 'AWS::CloudWatch::Alarm', 'MonitoringScheduleMissesAlarm')];
      expect(alarm?.Properties).toMatchObject({
        Namespace: SERVICE_METRICS_NAMESPACE,
        MetricName: 'ScheduleMisses',
        Dimensions: Object.entries(SERVICE_METRICS_DIMENSIONS).map(([Name, Value]) => ({ Name, Value })),
        Statistic: 'Sum',
        Period: 300,
        Threshold: 0,
        ComparisonOperator: 'GreaterThanThreshold',
        TreatMissingData: 'notBreaching',
        AlarmActions: pageAction(),
      });
    });

    it('fires while a webhook endpoint is paused: WebhookEndpointsOpened in any of the last three 5-minute periods', () => {
      const alarm = alarms()[logicalIdOf(template, 'AWS::CloudWatch::Alarm', 'MonitoringWebhookEndpointsOpenAlarm')];
      expect(alarm?.Properties).toMatchObject({
        Namespace: SERVICE_METRICS_NAMESPACE,
        MetricName: 'WebhookEndpointsOpened',
        Dimensions: Object.entries(SERVICE_METRICS_DIMENSIONS).map(([Name, Value]) => ({ Name, Value })),
        Statistic: 'Sum',
        Period: 300,
        Threshold: 0,
        ComparisonOperator: 'GreaterThanThreshold',
        // A paused endpoint with deliveries waiting is probed, and counted again, within 15 minutes.
        EvaluationPeriods: 3,
        DatapointsToAlarm: 1,
        TreatMissingData: 'notBreaching',
        AlarmActions: ticketAction(),
        OKActions: ticketAction(),
      });
    });

    it.each(Object.keys(queueDefinitions))('routes the %s DLQ depth alarm to the ticket topic', (name) => {
      const id = `${name[0]?.toUpperCase()}${name.slice(1)}`;
      const alarm = alarms()[logicalIdOf(template, 'AWS::CloudWatch::Alarm', `${id}DeadLetterAlarm`)];
      expect(alarm?.Properties).toMatchObject({
        Namespace: 'AWS/SQS',
        MetricName: 'ApproximateNumberOfMessagesVisible',
        Threshold: 1,
        AlarmActions: ticketAction(),
        OKActions: ticketAction(),
        TreatMissingData: 'notBreaching',
      });
      // The dead-letter queue's depth, not the queue's own.
      const queue = alarm?.Properties.Dimensions?.find((dimension) => dimension.Name === 'QueueName')?.Value;
      expect(queue).toEqual({
        'Fn::GetAtt': [logicalIdOf(template, 'AWS::SQS::Queue', `${id}DeadLetterQueue`), 'QueueName'],
      });
    });
  });

  describe('dashboard', () => {
    interface Widget {
      type: string;
      properties: { title?: string; metrics?: unknown[][]; alarms?: string[] };
    }
    let widgets: Widget[];
    /** `[namespace, metric name, dimension name, dimension value, options]` of every metric drawn or fetched. */
    const metricsOf = (widget: Widget) =>
      (widget.properties.metrics ?? []).filter((line) => typeof line[0] === 'string') as [string, string, ...unknown[]][];
    const allMetrics = () => widgets.flatMap(metricsOf);
    const has = (namespace: string, metricName: string, dimensionValue?: string, stat?: string) =>
      allMetrics().some(
        (line) =>
          line[0] === namespace &&
          line[1] === metricName &&
          (dimensionValue === undefined || line[3] === dimensionValue) &&
          (stat === undefined || (line.at(-1) as { stat?: string }).stat === stat),
      );

    beforeAll(() => {
      const dashboard = single(
        Object.values(resourcesOfType<CfnResource<{ DashboardBody: unknown }>>(template, 'AWS::CloudWatch::Dashboard')),
        'dashboard',
      );
      // The body is a Fn::Join of JSON text and references; a reference becomes `ref:<logical id>`.
      const parts = (dashboard.Properties.DashboardBody as { 'Fn::Join': [string, unknown[]] })['Fn::Join'][1];
      const body = parts.map((part) => (typeof part === 'string' ? part : `ref:${referencedIds(part)[0] ?? 'pseudo'}`)).join('');
      widgets = (JSON.parse(body) as { widgets: Widget[] }).widgets;
    });

    it('graphs the API: requests, 4xx, 5xx, latency p50 and p99', () => {
      const apiRef = `ref:${single(Object.keys(template.findResources('AWS::ApiGatewayV2::Api')), 'HTTP API')}`;
      expect(has('AWS/ApiGateway', 'Count', apiRef)).toBe(true);
      expect(has('AWS/ApiGateway', '4xx', apiRef)).toBe(true);
      expect(has('AWS/ApiGateway', '5xx', apiRef)).toBe(true);
      expect(has('AWS/ApiGateway', 'Latency', apiRef, 'p50')).toBe(true);
      expect(has('AWS/ApiGateway', 'Latency', apiRef, 'p99')).toBe(true);
    });

    it('graphs the top functions by errors, throttles and p99 duration, choosing among all of them', () => {
      for (const [metricName, stat] of [
        ['Errors', 'Sum'],
        ['Throttles', 'Sum'],
        ['Duration', 'p99'],
      ] as const) {
        const widget = single(
          widgets.filter(
            (candidate) =>
              metricsOf(candidate).some((line) => line[1] === metricName && line[0] === 'AWS/Lambda') &&
              candidate.properties.title?.includes('top'),
          ),
          `top functions by ${metricName}`,
        );
        expect(JSON.stringify(widget.properties.metrics)).toContain('SORT(METRICS(), MAX, DESC, 10)');
        const drawn = metricsOf(widget).filter((line) => line[1] === metricName);
        expect(drawn.every((line) => (line.at(-1) as { stat?: string }).stat === stat)).toBe(true);
        expect(drawn.map((line) => line[3]).sort()).toEqual(functionIds.map((id) => `ref:${id}`).sort());
      }
      expect(routes.length).toBeGreaterThan(METRICS_PER_ALARM);
    });

    it('graphs every queue and DLQ depth, the dispatcher invocations and the queue consumers’ errors', () => {
      const queues = Object.keys(template.findResources('AWS::SQS::Queue'));
      expect(queues).toHaveLength(2 * Object.keys(queueDefinitions).length);
      for (const queueId of queues)
        expect(has('AWS/SQS', 'ApproximateNumberOfMessagesVisible', `ref:${queueId}`), queueId).toBe(true);
      const workerRef = (handler: string) =>
        `ref:${single(
          functionIds.filter((id) => isLogicalIdOf(consumerIdOf(handler), id)),
          handler,
        )}`;
      expect(has('AWS/Lambda', 'Invocations', workerRef('schedule-dispatcher'))).toBe(true);
      for (const consumer of queueConsumers)
        expect(has('AWS/Lambda', 'Errors', workerRef(consumer.handler)), consumer.handler).toBe(true);
      expect(queueConsumers.map((consumer) => consumer.handler)).toContain('webhook-deliverer');
    });

    /** A line's dimensions, as name to value (CloudWatch lists them as name, value, name, value… in any order). */
    const dimensionsOf = (line: unknown[]) => {
      const pairs = line.slice(2, -1) as string[];
      return Object.fromEntries(pairs.flatMap((name, index) => (index % 2 === 0 ? [[name, pairs[index + 1]]] : [])));
    };

    it('graphs every metric the service emits (EMF, namespace BiTenantAdmin), in its own stage', () => {
      for (const name of SERVICE_METRIC_NAMES) {
        expect(
          allMetrics().some(
            (line) =>
              line[0] === SERVICE_METRICS_NAMESPACE &&
              line[1] === name &&
              expect.objectContaining(SERVICE_METRICS_DIMENSIONS).asymmetricMatch(dimensionsOf(line)),
          ),
          name,
        ).toBe(true);
      }
      // The stage too: two stages in one account and region never watch each other's metrics.
      expect(SERVICE_METRICS_DIMENSIONS).toEqual({ service: 'bi-tenant-admin', stage: STAGE });
    });

    it("graphs each queue consumer's messages received and failed, under its function's name", () => {
      for (const consumer of queueConsumers) {
        const functionRef = `ref:${logicalIdOf(template, 'AWS::Lambda::Function', consumerIdOf(consumer.handler))}`;
        for (const metricName of ['ConsumerMessagesReceived', 'ConsumerMessagesFailed'])
          expect(
            allMetrics().some(
              (line) =>
                line[1] === metricName &&
                JSON.stringify(dimensionsOf(line)) ===
                  JSON.stringify({ FunctionName: functionRef, ...SERVICE_METRICS_DIMENSIONS }),
            ),
            `${consumer.handler} ${metricName}`,
          ).toBe(true);
      }
    });

    it('graphs the table: throttles, system errors, consumed capacity and latency, of the table and its index', () => {
      const tableRef = `ref:${single(Object.keys(template.findResources('AWS::DynamoDB::Table')), 'table')}`;
      const ofTable = (metricName: string, extra: Record<string, string> = {}) =>
        allMetrics().some(
          (line) =>
            line[0] === 'AWS/DynamoDB' &&
            line[1] === metricName &&
            expect.objectContaining({ TableName: tableRef, ...extra }).asymmetricMatch(dimensionsOf(line)),
        );
      for (const metricName of [
        'ReadThrottleEvents',
        'WriteThrottleEvents',
        'ConsumedReadCapacityUnits',
        'ConsumedWriteCapacityUnits',
      ]) {
        expect(ofTable(metricName), metricName).toBe(true);
        expect(ofTable(metricName, { GlobalSecondaryIndexName: 'gsi1' }), `gsi1 ${metricName}`).toBe(true);
      }
      for (const operation of DYNAMODB_OPERATIONS)
        for (const metricName of ['ThrottledRequests', 'SystemErrors', 'SuccessfulRequestLatency'])
          expect(ofTable(metricName, { Operation: operation }), `${metricName} ${operation}`).toBe(true);
    });

    it('lists every notifying alarm', () => {
      const listed = widgets.flatMap((widget) => widget.properties.alarms ?? []);
      const notifying = [
        ...Object.keys(alarms()).filter(
          (id) => !/LambdaErrorsGroup|LambdaThrottlesGroup|ApiErrorBudget\w+Window|Release(Errors|Latency)/.test(id),
        ),
        ...Object.keys(composites()),
      ];
      expect(listed.map((alarm) => alarm.replace(/^ref:/, '')).sort()).toEqual(notifying.sort());
    });
  });

  it.each(Object.keys(queueDefinitions))('outputs what a redrive of the %s DLQ needs', (name) => {
    const id = `${name[0]?.toUpperCase()}${name.slice(1)}`;
    const queueId = logicalIdOf(template, 'AWS::SQS::Queue', `${id}Queue`);
    const deadLetterId = logicalIdOf(template, 'AWS::SQS::Queue', `${id}DeadLetterQueue`);
    template.hasOutput(`${id}QueueArn`, { Value: { 'Fn::GetAtt': [queueId, 'Arn'] } });
    template.hasOutput(`${id}DeadLetterQueueArn`, { Value: { 'Fn::GetAtt': [deadLetterId, 'Arn'] } });
    template.hasOutput(`${id}DeadLetterQueueUrl`, { Value: { Ref: deadLetterId } });
  });

  describe('schedules at scale', () => {
    type LambdaFunction = CfnResource<{
      ReservedConcurrentExecutions?: number;
      Environment?: { Variables: Record<string, unknown> };
    }>;
    type EventSourceMapping = CfnResource<{ FunctionName: unknown; ScalingConfig?: { MaximumConcurrency: number } }>;
    const fireWorker = queueConsumers.find((consumer) => consumer.queue === 'fire');
    const fireWorkerOf = (source: Template) => {
      const id = logicalIdOf(source, 'AWS::Lambda::Function', consumerIdOf(fireWorker?.handler ?? ''));
      const fn = resourcesOfType<LambdaFunction>(source, 'AWS::Lambda::Function')[id];
      // The event source feeds the function's live alias.
      const mapping = liveEventSourceOf<EventSourceMapping['Properties']>(source, id);
      return {
        concurrency: fn?.Properties.ReservedConcurrentExecutions,
        maximum: mapping?.Properties.ScalingConfig?.MaximumConcurrency,
      };
    };
    const dispatchVariablesOf = (source: Template) =>
      serviceFunctionIdsOf(source)
        .map((id) => resourcesOfType<LambdaFunction>(source, 'AWS::Lambda::Function')[id] as LambdaFunction)
        .map((fn) => [
          fn.Properties.Environment?.Variables[dispatchSettingVariables.dueShards],
          fn.Properties.Environment?.Variables[dispatchSettingVariables.duePageSize],
        ]);

    it(`reserves ${FIRE_CONCURRENCY.fallback} concurrent fire workers by default, and their event source runs no more`, () => {
      expect(fireWorkerOf(template)).toEqual({ concurrency: FIRE_CONCURRENCY.fallback, maximum: FIRE_CONCURRENCY.fallback });
    });

    it('gives every function the shape of the due-schedules index (shards, page size), by default and from context', () => {
      const { dueShards, duePageSize } = dispatchSettingLimits;
      const defaults = [String(dueShards.fallback), String(duePageSize.fallback)];
      expect(new Set(dispatchVariablesOf(template).map(String))).toEqual(new Set([defaults.map(String).join()]));
      const custom = synthesize({ dueShards: '32', duePageSize: 200, fireConcurrency: '50' });
      expect(new Set(dispatchVariablesOf(custom).map(String))).toEqual(new Set(['32,200']));
      expect(fireWorkerOf(custom)).toEqual({ concurrency: 50, maximum: 50 });
    });

    it('refuses settings outside their documented limits', () => {
      for (const [name, value] of [
        ['fireConcurrency', '1'],
        ['fireConcurrency', '1001'],
        ['fireConcurrency', 'many'],
        ['dueShards', '0'],
        ['dueShards', '257'],
        ['duePageSize', '5'],
        ['duePageSize', '12.5'],
      ] as const) {
        expect(() => synthesize({ [name]: value }), `${name}=${value}`).toThrow(
          new RegExp(`Context ${name} must be a whole number`),
        );
      }
    });

    it('makes the reload queue a high-throughput FIFO queue: a burst of fires sends more than 300 batches a second', () => {
      const id = logicalIdOf(template, 'AWS::SQS::Queue', 'ReloadQueue');
      expect(template.findResources('AWS::SQS::Queue')[id]?.Properties).toMatchObject({
        FifoQueue: true,
        DeduplicationScope: 'messageGroup',
        FifoThroughputLimit: 'perMessageGroupId',
      });
    });
  });

  describe('API stage', () => {
    type Stage = CfnResource<{
      StageName: string;
      AutoDeploy?: boolean;
      DefaultRouteSettings?: { ThrottlingRateLimit?: number; ThrottlingBurstLimit?: number };
      AccessLogSettings?: { DestinationArn: unknown; Format: string };
    }>;
    const stageOf = (source: Template) =>
      single(Object.values(resourcesOfType<Stage>(source, 'AWS::ApiGatewayV2::Stage')), 'API stage').Properties;

    it(`throttles the $default stage at ${DEFAULT_API_RATE_LIMIT} requests per second, bursts of ${DEFAULT_API_BURST_LIMIT}, by default`, () => {
      expect(stageOf(template)).toMatchObject({
        StageName: '$default',
        AutoDeploy: true,
        DefaultRouteSettings: { ThrottlingRateLimit: DEFAULT_API_RATE_LIMIT, ThrottlingBurstLimit: DEFAULT_API_BURST_LIMIT },
      });
    });

    it('takes the limits from the apiRateLimit and apiBurstLimit context, as strings (command line) or numbers (cdk.json)', () => {
      expect(stageOf(synthesize({ apiRateLimit: '50', apiBurstLimit: '120' })).DefaultRouteSettings).toEqual({
        ThrottlingRateLimit: 50,
        ThrottlingBurstLimit: 120,
      });
      expect(stageOf(synthesize({ apiRateLimit: 12.5, apiBurstLimit: 30 })).DefaultRouteSettings).toEqual({
        ThrottlingRateLimit: 12.5,
        ThrottlingBurstLimit: 30,
      });
    });

    it('refuses limits that are not positive numbers (the burst a whole one)', () => {
      expect(() => synthesize({ apiRateLimit: 'fast' })).toThrow(/apiRateLimit/);
      expect(() => synthesize({ apiRateLimit: '0' })).toThrow(/apiRateLimit/);
      expect(() => synthesize({ apiBurstLimit: '10.5' })).toThrow(/apiBurstLimit/);
    });

    it('logs each request as JSON to a log group with a retention, without headers or the path', () => {
      const settings = stageOf(template).AccessLogSettings;
      const logGroupId = single(referencedIds(settings?.DestinationArn), 'access log group');
      const logGroup = resourcesOfType<CfnResource<{ RetentionInDays?: number }>>(template, 'AWS::Logs::LogGroup')[logGroupId];
      expect(logGroup?.Properties.RetentionInDays).toBeGreaterThan(0);
      const fields = JSON.parse(settings?.Format ?? '{}') as Record<string, string>;
      expect(fields).toMatchObject({
        requestId: '$context.requestId',
        ip: '$context.identity.sourceIp',
        routeKey: '$context.routeKey',
        status: '$context.status',
        latency: '$context.responseLatency',
      });
      // The Authorization header and cookies stay out; so does the path, which can carry a login token.
      const variables = Object.values(fields).join(' ');
      expect(variables).not.toMatch(/header|authorization|cookie|\$context\.path|\$request/i);
      template.hasOutput('ApiAccessLogGroupName', { Value: { Ref: logGroupId } });
    });

    it('maps the tenant domains to that stage', () => {
      const withDomains = synthesize({}, { tenantCertificateArn: 'arn:aws:acm:us-east-1:123456789012:certificate/abc' });
      const stageId = single(Object.keys(withDomains.findResources('AWS::ApiGatewayV2::Stage')), 'stage');
      withDomains.hasResource('AWS::ApiGatewayV2::ApiMapping', {
        Properties: Match.objectLike({ Stage: '$default' }),
        DependsOn: Match.arrayWith([stageId]),
      });
    });
  });
});

describe('docs/operations.md', () => {
  const guide = readFileSync(new URL('../../docs/operations.md', import.meta.url), 'utf8');
  const stack = synthesize(
    { alarmEmail: 'ops@example.com' },
    { tenantCertificateArn: 'arn:aws:acm:us-east-1:123456789012:certificate/abc' },
  );
  /** A construct's logical id without the hash CDK appends: the name the guide and the console show. */
  const named = (logicalId: string) => logicalId.replace(/[0-9A-F]{8}$/, '');

  it('lists every output of the stack', () => {
    const outputs = Object.keys((stack.toJSON() as { Outputs: Record<string, unknown> }).Outputs);
    expect(outputs.length).toBeGreaterThan(10);
    for (const output of outputs) expect(guide, output).toContain(`\`${output}\``);
  });

  it('explains every alarm that notifies the topic, by its name', () => {
    const notifying = Object.entries({
      ...stack.findResources('AWS::CloudWatch::Alarm'),
      ...stack.findResources('AWS::CloudWatch::CompositeAlarm'),
    }).filter(([, alarm]) => (alarm as { Properties: { AlarmActions?: unknown[] } }).Properties.AlarmActions?.length);
    expect(notifying.length).toBeGreaterThan(5);
    for (const [id] of notifying) expect(guide, id).toContain(`\`${named(id)}\``);
  });
});
