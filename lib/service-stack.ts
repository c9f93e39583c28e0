import { Aws, CfnOutput, Duration, RemovalPolicy, Stack, type StackProps, Validations } from 'aws-cdk-lib';
import { Alarm, ComparisonOperator, type IAlarmAction, TreatMissingData } from 'aws-cdk-lib/aws-cloudwatch';
import { AccessLogFormat } from 'aws-cdk-lib/aws-apigateway';
import { ApiMapping, DomainName, HttpApi, HttpMethod, LogGroupLogDestination } from 'aws-cdk-lib/aws-apigatewayv2';
import { Certificate } from 'aws-cdk-lib/aws-certificatemanager';
import { AttributeType, BillingMode, type CfnTable, ProjectionType, Table } from 'aws-cdk-lib/aws-dynamodb';
import { Rule, Schedule } from 'aws-cdk-lib/aws-events';
import { LambdaFunction } from 'aws-cdk-lib/aws-events-targets';
import { SqsEventSource } from 'aws-cdk-lib/aws-lambda-event-sources';
import { type IRole, ManagedPolicy, PolicyStatement, Role, ServicePrincipal } from 'aws-cdk-lib/aws-iam';
import { LogGroup, RetentionDays } from 'aws-cdk-lib/aws-logs';
import { BlockPublicAccess, Bucket, BucketEncryption, type CfnBucket } from 'aws-cdk-lib/aws-s3';
import { Secret } from 'aws-cdk-lib/aws-secretsmanager';
import { DeduplicationScope, FifoThroughputLimit, Queue, QueueEncryption } from 'aws-cdk-lib/aws-sqs';
import type { Construct } from 'constructs';
import { dispatchSettingVariables } from '../functions/core/schedules/dispatch-settings.ts';
import { tableDefinition } from '../functions/core/store/table-definition.ts';
import {
  deadLetterUrlVariable,
  type QueueName,
  queueDefinitions,
  queueUrlVariable,
} from '../functions/core/store/queue-definitions.ts';
import { queueConsumers, type Route, routes, type TableAccess, timedFunctions } from '../functions/routes.ts';
import { AlarmTopic } from './alarm-topic.ts';
import { deploymentSettings } from './deployment-settings.ts';
import { chunk, type MonitoredFunction, ServiceMonitoring } from './monitoring.ts';
import { ProjectFunction } from './project-function.ts';
import { RoleInvokedLambdaIntegration } from './role-invoked-lambda.ts';

/**
 * Besides these props, the stack reads CDK context (see deployment-settings.ts): `alarmEmail`,
 * `apiRateLimit` and `apiBurstLimit`.
 */
export interface ServiceStackProps extends StackProps {
  stage: string;
  tenantBaseDomain: string;
  /**
   * ACM certificate for `*.<tenantBaseDomain>` (in the stack's region). With it, the API also answers
   * on every tenant domain, so login URLs reach the SSO landing; point a wildcard DNS record at the
   * `TenantDomainTarget` output.
   */
  tenantCertificateArn?: string;
}

/**
 * The DynamoDB actions behind each level of table access: exactly what the code calls, nothing
 * more (grantReadData would add Scan, which could read every tenant's rows). Transactions are
 * authorized per item action, so TransactWriteItems needs no action of its own.
 */
export const tableActions: Record<TableAccess, string[]> = {
  none: [],
  read: ['dynamodb:GetItem', 'dynamodb:BatchGetItem', 'dynamodb:Query'],
  readWrite: [
    'dynamodb:GetItem',
    'dynamodb:BatchGetItem',
    'dynamodb:Query',
    'dynamodb:PutItem',
    'dynamodb:UpdateItem',
    'dynamodb:DeleteItem',
    'dynamodb:BatchWriteItem',
    'dynamodb:ConditionCheckItem',
  ],
};

const pascalCase = (text: string) =>
  text
    .split(/[^A-Za-z0-9]+/)
    .filter(Boolean)
    .map((word) => word[0]?.toUpperCase() + word.slice(1))
    .join('');

/** `GET /tenants/{id}/token` becomes `GetTenantsIdToken`: stable, readable construct ids. */
export function functionIdOf(route: Pick<Route, 'method' | 'path'>): string {
  return pascalCase(`${route.method.toLowerCase()} ${route.path}`);
}

/** What a function may do; functions with the same permissions share one execution role. */
interface Permissions {
  table: TableAccess;
  sends: readonly QueueName[];
  /** The queue a consumer reads (its event source mapping grants that). */
  consumes?: QueueName;
  deadLetters?: QueueName;
  signingKeys?: boolean;
  payloads?: 'read' | 'readWrite';
}

/**
 * The S3 actions behind each level of payload access: what functions/core/store/payloads.ts calls.
 * ListBucket (on the bucket, not its objects) is what makes S3 answer NoSuchKey for a body that is
 * gone (delivered or expired), which the code expects, rather than AccessDenied.
 */
export const payloadActions: Record<'read' | 'readWrite', { objects: string[]; bucket: string[] }> = {
  read: { objects: ['s3:GetObject'], bucket: ['s3:ListBucket'] },
  readWrite: { objects: ['s3:GetObject', 's3:PutObject', 's3:DeleteObject'], bucket: ['s3:ListBucket'] },
};

/** A readable, stable name for a set of permissions (`read`, `readWrite sends reload`, …). */
/** Function ARNs run to about 120 characters: 40 keep a managed policy well under its 6,144. */
const ARNS_PER_INVOKE_POLICY = 40;

function permissionsKey(needs: Permissions): string {
  return [
    needs.table,
    ...(needs.sends.length ? [`sends ${[...needs.sends].sort().join(' ')}`] : []),
    ...(needs.consumes ? [`consumes ${needs.consumes}`] : []),
    ...(needs.deadLetters ? [`dead-letters ${needs.deadLetters}`] : []),
    ...(needs.signingKeys ? ['signing keys'] : []),
    ...(needs.payloads ? [`payloads ${needs.payloads}`] : []),
  ].join(' ');
}

/** `reload-worker` becomes `ReloadWorker` (queue consumers and timed functions). */
export const consumerIdOf = (handler: string) => pascalCase(handler);

/**
 * What the API access log records per request, as JSON: who, which route, what answer, how fast.
 * No header (so no Authorization, no cookie) and no path: the SSO landing's path carries a login
 * token, and routeKey names the route without it.
 */
export const apiAccessLogFields = {
  requestId: '$context.requestId',
  requestTime: '$context.requestTime',
  ip: '$context.identity.sourceIp',
  domainName: '$context.domainName',
  routeKey: '$context.routeKey',
  status: '$context.status',
  responseLength: '$context.responseLength',
  latency: '$context.responseLatency',
  integrationLatency: '$context.integrationLatency',
  error: '$context.error.message',
  integrationError: '$context.integrationErrorMessage',
};

/** The whole service: one table, one HTTP API, one function per row of the route table. */
export class ServiceStack extends Stack {
  constructor(scope: Construct, id: string, props: ServiceStackProps) {
    super(scope, id, props);

    const table = new Table(this, 'Table', {
      partitionKey: { name: tableDefinition.partitionKey, type: AttributeType.STRING },
      sortKey: { name: tableDefinition.sortKey, type: AttributeType.STRING },
      billingMode: BillingMode.PAY_PER_REQUEST,
      pointInTimeRecoverySpecification: { pointInTimeRecoveryEnabled: true },
      timeToLiveAttribute: tableDefinition.timeToLiveAttribute,
      deletionProtection: props.stage === 'prod',
      removalPolicy: RemovalPolicy.RETAIN,
    });
    for (const index of tableDefinition.globalIndexes) {
      table.addGlobalSecondaryIndex({
        indexName: index.indexName,
        partitionKey: { name: index.partitionKey, type: AttributeType.STRING },
        sortKey: { name: index.sortKey, type: AttributeType.STRING },
        projectionType: ProjectionType.ALL,
      });
    }

    const settings = deploymentSettings(this);
    // Every alarm of the service notifies this one topic (the ARN is an output).
    const alarmTopic = new AlarmTopic(this, 'Alarms', { email: settings.alarmEmail });

    const { queues, deadLetterQueues, deadLetterAlarms } = this.createQueues(alarmTopic.action);

    // Webhook bodies too large for a queue message (the claim check). Private, encrypted, TLS only;
    // a body is deleted once delivered, and anything left (failed, kept for a redelivery) expires
    // with its delivery record.
    const payloads = new Bucket(this, 'Payloads', {
      encryption: BucketEncryption.S3_MANAGED,
      blockPublicAccess: BlockPublicAccess.BLOCK_ALL,
      enforceSSL: true,
      lifecycleRules: [{ expiration: Duration.days(31), abortIncompleteMultipartUploadAfter: Duration.days(1) }],
      removalPolicy: RemovalPolicy.RETAIN,
    });
    Validations.of(payloads).acknowledge({
      id: 'AwsSolutions-S1',
      reason:
        'Server access logs are not kept for the payload bucket: it only holds transient webhook bodies (claim checks) ' +
        "that the service's own roles write, read and delete, public access is blocked and TLS enforced; CloudTrail S3 " +
        'data events are the audit trail to turn on if object access must be audited.',
    });
    // The login-token keyring. Created empty; `npm run admin -- keys rotate` puts the first key in.
    const signingKeys = new Secret(this, 'SigningKeys', {
      description: 'ES256 keys that sign SSO login tokens (JSON keyring; rotate with npm run admin -- keys rotate)',
      generateSecretString: { secretStringTemplate: JSON.stringify({ keys: [] }), generateStringKey: 'unused' },
    });
    Validations.of(signingKeys).acknowledge({
      id: 'AwsSolutions-SMG4',
      reason:
        'The keyring is rotated by an operator with `npm run admin -- keys rotate` (docs/operations.md), which adds a key ' +
        'and keeps the retired ones published until the tokens they signed expire; a Secrets Manager rotation function ' +
        'replacing the value would break the verification of live login tokens.',
    });

    /** The cdk-nag findings every execution role has by design, acknowledged on that role only. */
    const tableLogicalId = this.resolve((table.node.defaultChild as CfnTable).logicalId) as string;
    const payloadsLogicalId = this.resolve((payloads.node.defaultChild as CfnBucket).logicalId) as string;
    const acknowledgeRoleFindings = (role: Role, needs: Permissions) => {
      const acknowledge = (id: string, reason: string) => Validations.of(role).acknowledge({ id, reason });
      acknowledge(
        'AwsSolutions-IAM5[Resource::*]',
        'X-Ray tracing (Tracing.ACTIVE on every function) needs xray:PutTraceSegments and xray:PutTelemetryRecords, ' +
          'which support no resource-level permissions, so their resource is *; test/infra/nag.test.ts checks that no ' +
          'other statement of a role uses *.',
      );
      if (needs.table !== 'none')
        acknowledge(
          `AwsSolutions-IAM5[Resource::<${tableLogicalId}.Arn>/index/*]`,
          `The wildcard covers only the indexes of the service's table (${tableDefinition.globalIndexes.map((index) => index.indexName).join(', ')}), ` +
            'with the same named actions as the table itself; Query on an index needs the index ARN.',
        );
      if (needs.payloads)
        acknowledge(
          `AwsSolutions-IAM5[Resource::<${payloadsLogicalId}.Arn>/*]`,
          'Object keys in the payload bucket are made per delivery at run time (deliveries/<tenant>/<delivery>.json), so ' +
            'the object actions (named, no wildcard) apply to the objects of this one bucket.',
        );
    };

    /**
     * One execution role per set of permissions, shared by the functions that need exactly that
     * set: each function still has only what it needs, and the stack stays well under
     * CloudFormation's 500 resources (a role and a policy per function would not).
     */
    const roles = new Map<string, Role>();
    /** Per role, the statement letting its functions write their own log groups (and no other). */
    const logWriting = new Map<IRole, PolicyStatement>();
    const roleFor = (needs: Permissions): Role => {
      const key = permissionsKey(needs);
      const existing = roles.get(key);
      if (existing) return existing;
      const role = new Role(this, `Role${pascalCase(key)}`, {
        assumedBy: new ServicePrincipal('lambda.amazonaws.com'),
        description: `Functions that need: ${key}`,
      });
      // Instead of AWSLambdaBasicExecutionRole, which may write (and create) every log group of the account.
      const writeLogs = new PolicyStatement({ actions: ['logs:CreateLogStream', 'logs:PutLogEvents'] });
      role.addToPolicy(writeLogs);
      logWriting.set(role, writeLogs);
      if (needs.table !== 'none') table.grant(role, ...tableActions[needs.table]);
      for (const name of needs.sends) queues[name].grantSendMessages(role);
      if (needs.deadLetters) deadLetterQueues[needs.deadLetters].grantSendMessages(role);
      if (needs.signingKeys) signingKeys.grantRead(role);
      // Named actions rather than grantRead/grantPut/grantDelete, which add wildcards (s3:GetObject*,
      // s3:List*, s3:Abort*, …). readWrite also deletes: a delivered body is removed at once.
      if (needs.payloads) {
        const actions = payloadActions[needs.payloads];
        role.addToPolicy(new PolicyStatement({ actions: actions.objects, resources: [payloads.arnForObjects('*')] }));
        role.addToPolicy(new PolicyStatement({ actions: actions.bucket, resources: [payloads.bucketArn] }));
      }
      acknowledgeRoleFindings(role, needs);
      roles.set(key, role);
      return role;
    };
    const payloadEnvironment = (access: Permissions['payloads']): Record<string, string> =>
      access ? { PAYLOAD_BUCKET: payloads.bucketName } : {};

    // The API's one stage, $default, made here rather than by HttpApi (same construct id, so the same
    // resource) to give it throttling (CDK context) and a JSON access log (apiAccessLogFields).
    const api = new HttpApi(this, 'Api', { apiName: `bi-tenant-admin-${props.stage}`, createDefaultStage: false });
    const accessLogs = new LogGroup(this, 'ApiAccessLogs', {
      retention: RetentionDays.ONE_MONTH,
      removalPolicy: RemovalPolicy.DESTROY,
    });
    const stage = api.addStage('DefaultStage', {
      stageName: '$default',
      autoDeploy: true,
      throttle: { rateLimit: settings.apiRateLimit, burstLimit: settings.apiBurstLimit },
      accessLogSettings: {
        destination: new LogGroupLogDestination(accessLogs),
        format: AccessLogFormat.custom(JSON.stringify(apiAccessLogFields)),
      },
    });
    if (props.tenantCertificateArn) {
      const tenantDomains = new DomainName(this, 'TenantDomains', {
        domainName: `*.${props.tenantBaseDomain}`,
        certificate: Certificate.fromCertificateArn(this, 'TenantCertificate', props.tenantCertificateArn),
      });
      new ApiMapping(this, 'TenantDomainMapping', { api, domainName: tenantDomains, stage });
      new CfnOutput(this, 'TenantDomainTarget', { value: tenantDomains.regionalDomainName });
    }
    // What every function that touches the table reads: the table, and the shape of the due-schedules index.
    const tableEnvironment = {
      TABLE_NAME: table.tableName,
      [dispatchSettingVariables.dueShards]: String(settings.dueShards),
      [dispatchSettingVariables.duePageSize]: String(settings.duePageSize),
    };
    const environment = {
      ...tableEnvironment,
      TENANT_BASE_DOMAIN: props.tenantBaseDomain,
      LOGIN_TOKEN_ISSUER: `bi-tenant-admin:${props.stage}`,
    };

    const serviceFunctions: { name: string; fn: ProjectFunction }[] = [];
    // API Gateway calls every route's function with this one role (see RoleInvokedLambdaIntegration).
    const apiInvoker = new Role(this, 'ApiInvokeRole', {
      assumedBy: new ServicePrincipal('apigateway.amazonaws.com'),
      description: 'API Gateway invokes the route functions with this role, and nothing else',
    });
    const routeFunctions: ProjectFunction[] = [];
    for (const route of routes) {
      const functionId = functionIdOf(route);
      const sends = route.sends ?? [];
      const fn = new ProjectFunction(this, functionId, {
        entry: `functions/http/${route.handler}.ts`,
        description: `${route.method} ${route.path}: ${route.summary}`,
        environment: {
          ...environment,
          ...Object.fromEntries(sends.map((name) => [queueUrlVariable(name), queues[name].queueUrl])),
          ...(route.signingKeys ? { SIGNING_KEYS_SECRET_ARN: signingKeys.secretArn } : {}),
          ...payloadEnvironment(route.payloads),
        },
        role: roleFor({ table: route.table, sends, signingKeys: Boolean(route.signingKeys), payloads: route.payloads }),
        packageFiles: route.packageFiles,
      });
      serviceFunctions.push({ name: functionId, fn });
      routeFunctions.push(fn);
      const [apiRoute] = api.addRoutes({
        path: route.path,
        methods: [HttpMethod[route.method]],
        integration: new RoleInvokedLambdaIntegration(`${functionId}Integration`, fn, apiInvoker),
      });
      if (apiRoute)
        Validations.of(apiRoute).acknowledge({
          id: 'AwsSolutions-APIG4',
          reason: route.auth.length
            ? `Authorized in the handler, not by an API Gateway authorizer (DESIGN.md section 2: immediate revocation, no authorizer cache): the route table lets ${route.auth.join(', ')} bearer tokens in.`
            : `Public by design, no token: ${route.summary}. Any check it needs (a login token, a session cookie) is made in the handler.`,
        });
    }

    // Exactly the route functions, by ARN (no `:*` for versions: none is published), in customer
    // managed policies of at most 40 ARNs each, well within a policy's 6,144 characters.
    for (const [index, functions] of chunk(routeFunctions, ARNS_PER_INVOKE_POLICY).entries()) {
      new ManagedPolicy(this, `ApiInvokePolicy${index + 1}`, {
        description: `Lets API Gateway invoke route functions (part ${index + 1})`,
        roles: [apiInvoker],
        statements: [
          new PolicyStatement({ actions: ['lambda:InvokeFunction'], resources: functions.map((fn) => fn.functionArn) }),
        ],
      });
    }

    const consumerFunctions: MonitoredFunction[] = [];
    for (const consumer of queueConsumers) {
      const queue = queues[consumer.queue];
      const deadLetterQueue = deadLetterQueues[consumer.queue];
      const sends = consumer.sends ?? [];
      const concurrency = consumer.concurrencySetting && settings[consumer.concurrencySetting];
      const fn = new ProjectFunction(this, consumerIdOf(consumer.handler), {
        entry: `functions/workers/${consumer.handler}.ts`,
        description: `${consumer.queue} queue: ${consumer.summary}`,
        environment: {
          ...tableEnvironment,
          // Its own queue, for the consumers that set a message's visibility (the retry delay).
          [queueUrlVariable(consumer.queue)]: queue.queueUrl,
          ...(consumer.sendsToDeadLetter ? { [deadLetterUrlVariable(consumer.queue)]: deadLetterQueue.queueUrl } : {}),
          ...Object.fromEntries(sends.map((name) => [queueUrlVariable(name), queues[name].queueUrl])),
          ...payloadEnvironment(consumer.payloads),
        },
        timeoutSeconds: consumer.timeoutSeconds,
        reservedConcurrency: concurrency,
        // The event source mapping adds the consumer's receive and delete grants to this role.
        role: roleFor({
          table: consumer.table,
          sends,
          consumes: consumer.queue,
          deadLetters: consumer.sendsToDeadLetter ? consumer.queue : undefined,
          payloads: consumer.payloads,
        }),
      });
      fn.addEventSource(
        new SqsEventSource(queue, {
          batchSize: consumer.batchSize,
          reportBatchItemFailures: true,
          // No more pollers than the reserved concurrency lets run: none of its batches is throttled back to the queue.
          ...(concurrency ? { maxConcurrency: concurrency } : {}),
        }),
      );
      serviceFunctions.push({ name: consumerIdOf(consumer.handler), fn });
      consumerFunctions.push({ name: consumer.handler, fn });
    }

    const timers: (MonitoredFunction & { everyMinutes: number })[] = [];
    for (const timed of timedFunctions) {
      const sends = timed.sends ?? [];
      const fn = new ProjectFunction(this, consumerIdOf(timed.handler), {
        entry: `functions/workers/${timed.handler}.ts`,
        description: `Every ${timed.everyMinutes} minute(s): ${timed.summary}`,
        environment: {
          ...tableEnvironment,
          ...Object.fromEntries(sends.map((name) => [queueUrlVariable(name), queues[name].queueUrl])),
        },
        timeoutSeconds: 60,
        role: roleFor({ table: timed.table, sends }),
      });
      new Rule(this, `${consumerIdOf(timed.handler)}Rule`, {
        description: `Runs ${timed.handler} every ${timed.everyMinutes} minute(s)`,
        schedule: Schedule.rate(Duration.minutes(timed.everyMinutes)),
        // A tick that could not run is not worth running late: the next one fires what is due.
        targets: [new LambdaFunction(fn, { retryAttempts: 2, maxEventAge: Duration.minutes(2) })],
      });
      serviceFunctions.push({ name: consumerIdOf(timed.handler), fn });
      timers.push({ name: consumerIdOf(timed.handler), fn, everyMinutes: timed.everyMinutes });
    }

    for (const { name, fn } of serviceFunctions) {
      const writeLogs = fn.role && logWriting.get(fn.role);
      if (!writeLogs) throw new Error(`${name} has no role of roleFor`);
      writeLogs.addResources(fn.logGroup.logGroupArn);
    }

    const monitoring = new ServiceMonitoring(this, 'Monitoring', {
      api,
      functions: serviceFunctions,
      timedFunctions: timers,
      queueConsumers: consumerFunctions,
      queues: (Object.keys(queues) as QueueName[]).map((name) => ({
        name,
        queue: queues[name],
        deadLetterQueue: deadLetterQueues[name],
      })),
      otherAlarms: deadLetterAlarms,
      alarmAction: alarmTopic.action,
    });

    new CfnOutput(this, 'ApiUrl', { value: api.apiEndpoint });
    new CfnOutput(this, 'TableName', { value: table.tableName });
    new CfnOutput(this, 'SigningKeysSecretArn', { value: signingKeys.secretArn });
    new CfnOutput(this, 'PayloadBucketName', { value: payloads.bucketName });
    // What a DLQ redrive needs (docs/operations.md): each queue's ARN, its DLQ's URL and ARN.
    for (const name of Object.keys(queues) as QueueName[]) {
      const id = pascalCase(name);
      new CfnOutput(this, `${id}QueueArn`, { value: queues[name].queueArn });
      new CfnOutput(this, `${id}DeadLetterQueueUrl`, { value: deadLetterQueues[name].queueUrl });
      new CfnOutput(this, `${id}DeadLetterQueueArn`, { value: deadLetterQueues[name].queueArn });
    }
    new CfnOutput(this, 'AlarmTopicArn', { value: alarmTopic.topic.topicArn });
    new CfnOutput(this, 'ApiAccessLogGroupName', { value: accessLogs.logGroupName });
    new CfnOutput(this, 'DashboardUrl', {
      value: `https://${Aws.REGION}.console.aws.amazon.com/cloudwatch/home?region=${Aws.REGION}#dashboards:name=${monitoring.dashboardName}`,
    });
  }

  /** Every queue of the definitions, encrypted and TLS-only, with its DLQ and an alarm on the DLQ's depth. */
  private createQueues(alarmAction: IAlarmAction): {
    queues: Record<QueueName, Queue>;
    deadLetterQueues: Record<QueueName, Queue>;
    deadLetterAlarms: Alarm[];
  } {
    const queues = {} as Record<QueueName, Queue>;
    const deadLetterQueues = {} as Record<QueueName, Queue>;
    const deadLetterAlarms: Alarm[] = [];
    for (const [name, definition] of Object.entries(queueDefinitions) as [QueueName, (typeof queueDefinitions)[QueueName]][]) {
      const id = pascalCase(name);
      const deadLetterQueue = new Queue(this, `${id}DeadLetterQueue`, {
        fifo: definition.fifo,
        retentionPeriod: Duration.days(definition.deadLetterRetentionDays),
        encryption: QueueEncryption.SQS_MANAGED,
        enforceSSL: true,
      });
      deadLetterQueues[name] = deadLetterQueue;
      queues[name] = new Queue(this, `${id}Queue`, {
        fifo: definition.fifo,
        ...(definition.highThroughput
          ? {
              deduplicationScope: DeduplicationScope.MESSAGE_GROUP,
              fifoThroughputLimit: FifoThroughputLimit.PER_MESSAGE_GROUP_ID,
            }
          : {}),
        visibilityTimeout: Duration.seconds(definition.visibilityTimeoutSeconds),
        retentionPeriod: Duration.days(definition.retentionDays),
        deadLetterQueue: { queue: deadLetterQueue, maxReceiveCount: definition.maxReceiveCount },
        encryption: QueueEncryption.SQS_MANAGED,
        enforceSSL: true,
      });
      const alarm = new Alarm(this, `${id}DeadLetterAlarm`, {
        alarmDescription:
          `A message of the ${name} queue is in its dead-letter queue: processing gave up on it after its retries, and it ` +
          `waits there for an operator (kept ${definition.deadLetterRetentionDays} days). Inspect it, fix the cause, then ` +
          'redrive it: docs/operations.md, section Dead-letter queues.',
        metric: deadLetterQueue.metricApproximateNumberOfMessagesVisible({ period: Duration.minutes(1), statistic: 'Maximum' }),
        threshold: 1,
        evaluationPeriods: 1,
        comparisonOperator: ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
        treatMissingData: TreatMissingData.NOT_BREACHING,
      });
      alarm.addAlarmAction(alarmAction);
      alarm.addOkAction(alarmAction);
      deadLetterAlarms.push(alarm);
    }
    return { queues, deadLetterQueues, deadLetterAlarms };
  }
}
