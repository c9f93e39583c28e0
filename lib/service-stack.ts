import { CfnOutput, Duration, RemovalPolicy, Stack, type StackProps } from 'aws-cdk-lib';
import { Alarm, ComparisonOperator, TreatMissingData } from 'aws-cdk-lib/aws-cloudwatch';
import { ApiMapping, DomainName, HttpApi, HttpMethod } from 'aws-cdk-lib/aws-apigatewayv2';
import { Certificate } from 'aws-cdk-lib/aws-certificatemanager';
import { HttpLambdaIntegration } from 'aws-cdk-lib/aws-apigatewayv2-integrations';
import { AttributeType, BillingMode, ProjectionType, Table } from 'aws-cdk-lib/aws-dynamodb';
import { Rule, Schedule } from 'aws-cdk-lib/aws-events';
import { LambdaFunction } from 'aws-cdk-lib/aws-events-targets';
import { SqsEventSource } from 'aws-cdk-lib/aws-lambda-event-sources';
import { ManagedPolicy, Role, ServicePrincipal } from 'aws-cdk-lib/aws-iam';
import { BlockPublicAccess, Bucket, BucketEncryption } from 'aws-cdk-lib/aws-s3';
import { Secret } from 'aws-cdk-lib/aws-secretsmanager';
import { Queue, QueueEncryption } from 'aws-cdk-lib/aws-sqs';
import type { Construct } from 'constructs';
import { tableDefinition } from '../functions/core/store/table-definition.ts';
import {
  deadLetterUrlVariable,
  type QueueName,
  queueDefinitions,
  queueUrlVariable,
} from '../functions/core/store/queue-definitions.ts';
import { queueConsumers, type Route, routes, type TableAccess, timedFunctions } from '../functions/routes.ts';
import { ProjectFunction } from './project-function.ts';

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

/** A readable, stable name for a set of permissions (`read`, `readWrite sends reload`, …). */
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

    const { queues, deadLetterQueues } = this.createQueues();

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
    // The login-token keyring. Created empty; `npm run admin -- keys rotate` puts the first key in.
    const signingKeys = new Secret(this, 'SigningKeys', {
      description: 'ES256 keys that sign SSO login tokens (JSON keyring; rotate with npm run admin -- keys rotate)',
      generateSecretString: { secretStringTemplate: JSON.stringify({ keys: [] }), generateStringKey: 'unused' },
    });

    /**
     * One execution role per set of permissions, shared by the functions that need exactly that
     * set: each function still has only what it needs, and the stack stays well under
     * CloudFormation's 500 resources (a role and a policy per function would not).
     */
    const roles = new Map<string, Role>();
    const roleFor = (needs: Permissions): Role => {
      const key = permissionsKey(needs);
      const existing = roles.get(key);
      if (existing) return existing;
      const role = new Role(this, `Role${pascalCase(key)}`, {
        assumedBy: new ServicePrincipal('lambda.amazonaws.com'),
        description: `Functions that need: ${key}`,
        managedPolicies: [ManagedPolicy.fromAwsManagedPolicyName('service-role/AWSLambdaBasicExecutionRole')],
      });
      if (needs.table !== 'none') table.grant(role, ...tableActions[needs.table]);
      for (const name of needs.sends) queues[name].grantSendMessages(role);
      if (needs.deadLetters) deadLetterQueues[needs.deadLetters].grantSendMessages(role);
      if (needs.signingKeys) signingKeys.grantRead(role);
      if (needs.payloads) payloads.grantRead(role);
      // readWrite also deletes: a delivered body is removed at once.
      if (needs.payloads === 'readWrite') {
        payloads.grantPut(role);
        payloads.grantDelete(role);
      }
      roles.set(key, role);
      return role;
    };
    const payloadEnvironment = (access: Permissions['payloads']): Record<string, string> =>
      access ? { PAYLOAD_BUCKET: payloads.bucketName } : {};

    const api = new HttpApi(this, 'Api', { apiName: `bi-tenant-admin-${props.stage}` });
    if (props.tenantCertificateArn) {
      const tenantDomains = new DomainName(this, 'TenantDomains', {
        domainName: `*.${props.tenantBaseDomain}`,
        certificate: Certificate.fromCertificateArn(this, 'TenantCertificate', props.tenantCertificateArn),
      });
      new ApiMapping(this, 'TenantDomainMapping', { api, domainName: tenantDomains });
      new CfnOutput(this, 'TenantDomainTarget', { value: tenantDomains.regionalDomainName });
    }
    const environment = {
      TABLE_NAME: table.tableName,
      TENANT_BASE_DOMAIN: props.tenantBaseDomain,
      LOGIN_TOKEN_ISSUER: `bi-tenant-admin:${props.stage}`,
    };

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
      });
      api.addRoutes({
        path: route.path,
        methods: [HttpMethod[route.method]],
        integration: new HttpLambdaIntegration(`${functionId}Integration`, fn),
      });
    }

    for (const consumer of queueConsumers) {
      const queue = queues[consumer.queue];
      const deadLetterQueue = deadLetterQueues[consumer.queue];
      const fn = new ProjectFunction(this, consumerIdOf(consumer.handler), {
        entry: `functions/workers/${consumer.handler}.ts`,
        description: `${consumer.queue} queue: ${consumer.summary}`,
        environment: {
          TABLE_NAME: table.tableName,
          // Its own queue, for the consumers that set a message's visibility (the retry delay).
          [queueUrlVariable(consumer.queue)]: queue.queueUrl,
          ...(consumer.sendsToDeadLetter ? { [deadLetterUrlVariable(consumer.queue)]: deadLetterQueue.queueUrl } : {}),
          ...payloadEnvironment(consumer.payloads),
        },
        timeoutSeconds: consumer.timeoutSeconds,
        // The event source mapping adds the consumer's receive and delete grants to this role.
        role: roleFor({
          table: consumer.table,
          sends: [],
          consumes: consumer.queue,
          deadLetters: consumer.sendsToDeadLetter ? consumer.queue : undefined,
          payloads: consumer.payloads,
        }),
      });
      fn.addEventSource(new SqsEventSource(queue, { batchSize: consumer.batchSize, reportBatchItemFailures: true }));
    }

    for (const timed of timedFunctions) {
      const sends = timed.sends ?? [];
      const fn = new ProjectFunction(this, consumerIdOf(timed.handler), {
        entry: `functions/workers/${timed.handler}.ts`,
        description: `Every ${timed.everyMinutes} minute(s): ${timed.summary}`,
        environment: {
          TABLE_NAME: table.tableName,
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
    }

    new CfnOutput(this, 'ApiUrl', { value: api.apiEndpoint });
    new CfnOutput(this, 'TableName', { value: table.tableName });
    new CfnOutput(this, 'SigningKeysSecretArn', { value: signingKeys.secretArn });
    new CfnOutput(this, 'PayloadBucketName', { value: payloads.bucketName });
  }

  /** Every queue of the definitions, encrypted and TLS-only, with its DLQ and an alarm on the DLQ's depth. */
  private createQueues(): { queues: Record<QueueName, Queue>; deadLetterQueues: Record<QueueName, Queue> } {
    const queues = {} as Record<QueueName, Queue>;
    const deadLetterQueues = {} as Record<QueueName, Queue>;
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
        visibilityTimeout: Duration.seconds(definition.visibilityTimeoutSeconds),
        retentionPeriod: Duration.days(definition.retentionDays),
        deadLetterQueue: { queue: deadLetterQueue, maxReceiveCount: definition.maxReceiveCount },
        encryption: QueueEncryption.SQS_MANAGED,
        enforceSSL: true,
      });
      new Alarm(this, `${id}DeadLetterAlarm`, {
        alarmDescription: `Messages of the ${name} queue failed ${definition.maxReceiveCount} times and wait in its DLQ for an operator`,
        metric: deadLetterQueue.metricApproximateNumberOfMessagesVisible({ period: Duration.minutes(1), statistic: 'Maximum' }),
        threshold: 1,
        evaluationPeriods: 1,
        comparisonOperator: ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
        treatMissingData: TreatMissingData.NOT_BREACHING,
      });
    }
    return { queues, deadLetterQueues };
  }
}
